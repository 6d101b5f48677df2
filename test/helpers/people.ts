/** A person to add with OrgsActor.addUser in actor tests: a human with a verified email and a password hash. */
export const person = (userName: string) => ({
  person: {
    userName,
    profile: { firstName: 'A', lastName: 'B', nickName: '', preferredLanguage: 'en', gender: 'GENDER_UNSPECIFIED' as const },
    email: { email: `${userName}@example.com`, isEmailVerified: true },
  },
  credentials: { passwordHash: 'hash' },
});

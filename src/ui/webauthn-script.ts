import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/**
 * The one script of the login: the WebAuthn ceremony of the passkey and security-key pages, with
 * @simplewebauthn/browser (its own bundle, inlined) and a few lines that read the options from the
 * page's JSON block, run the ceremony when the button is pressed and post the answer in the form.
 * It is inline, allowed by its hash (src/http/html.ts): no other script runs. Without it (scripts
 * off) the button stays disabled and the page's other ways on still work.
 */
const require = createRequire(import.meta.url);
// The package exports only its modules: its bundle is found beside them (script/index.js → dist/bundle/).
const BUNDLE = readFileSync(join(dirname(require.resolve('@simplewebauthn/browser')), '..', 'dist/bundle/index.umd.min.js'), 'utf8');

const CEREMONY = `
(function () {
  var data = document.getElementById('webauthn-options');
  var form = document.getElementById('webauthn-form');
  var button = document.getElementById('webauthn-start');
  if (!data || !form || !button || !window.PublicKeyCredential) return;
  var options = JSON.parse(data.textContent);
  button.disabled = false;
  button.addEventListener('click', function (event) {
    event.preventDefault();
    button.disabled = true;
    var run = options.mode === 'register'
      ? SimpleWebAuthnBrowser.startRegistration({ optionsJSON: options.publicKey })
      : SimpleWebAuthnBrowser.startAuthentication({ optionsJSON: options.publicKey });
    run.then(function (answer) {
      form.elements.credential.value = JSON.stringify(answer);
      form.submit();
    }, function (error) {
      form.elements.failure.value = (error && error.name) || 'Error';
      form.submit();
    });
  });
})();`;

export const WEBAUTHN_SCRIPT = `${BUNDLE}\n${CEREMONY}`;

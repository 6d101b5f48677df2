import type { z } from 'zod';
import type { Form } from '../../protocol/form.js';
import type { PolicyField } from '../../ui/console/policies.js';

/**
 * A policy's form, read from the schema the API validates it with (src/zitadel/policies.ts): one
 * table decides the fields, so the console cannot offer a field the API does not take or miss one
 * it does. Lists (the login policy's factors and providers) are not edited here: they are sent
 * back as the API answered them, so saving the form keeps them.
 */
interface Def {
  type: string;
  innerType?: z.ZodType;
  in?: z.ZodType;
  out?: z.ZodType;
  options?: z.ZodType[];
  entries?: Record<string, string>;
  shape?: Record<string, z.ZodType>;
}

const defOf = (schema: z.ZodType) => (schema as unknown as { _zod: { def: Def } })._zod.def;

interface FieldKind {
  kind: PolicyField['kind'];
  options?: string[];
  optional?: boolean;
}

function kindOf(schema: z.ZodType): FieldKind {
  const def = defOf(schema);
  switch (def.type) {
    case 'default':
      return kindOf(def.innerType!);
    case 'optional':
      return { ...kindOf(def.innerType!), optional: true };
    case 'pipe':
      // A preprocess step (an enum's number form) comes before the type; a transform after it.
      return defOf(def.in!).type === 'transform' ? kindOf(def.out!) : kindOf(def.in!);
    case 'boolean':
      return { kind: 'boolean' };
    case 'number':
      return { kind: 'number' };
    case 'union':
      return def.options!.some((o) => defOf(o).type === 'number') ? { kind: 'number' } : { kind: 'text' };
    case 'enum':
      return { kind: 'enum', options: Object.values(def.entries!) };
    case 'array':
      return { kind: 'list' };
    default:
      return { kind: 'text' };
  }
}

/** The schema's fields with the values the API answered (zero values are left out of its JSON). */
export function policyFields(schema: z.ZodType, policy: Record<string, unknown>): PolicyField[] {
  const shape = defOf(schema).shape ?? {};
  return Object.entries(shape).map(([name, fieldSchema]) => {
    const kind = kindOf(fieldSchema);
    const raw = policy[name];
    const value = kind.kind === 'boolean' ? raw === true : kind.kind === 'list' ? raw : raw === undefined ? '' : String(raw);
    return { name, ...kind, value } as PolicyField;
  });
}

/** The API's body for a posted form: the lists as they were, every other field as typed. */
export function policyBody(fields: readonly PolicyField[], form: Form): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const field of fields) {
    if (field.kind === 'list') {
      // The API leaves an empty list out of its answer: sent back empty, not left out (which would mean "the default").
      body[field.name] = field.value ?? [];
    } else if (field.kind === 'boolean') {
      body[field.name] = form.get(field.name) === 'true';
    } else {
      const typed = (form.get(field.name) ?? '').trim();
      // An optional field left empty stays unset (its default applies); a number left empty is zero.
      if (typed !== '') body[field.name] = typed;
      else if (!field.optional) body[field.name] = field.kind === 'number' ? 0 : '';
    }
  }
  return body;
}

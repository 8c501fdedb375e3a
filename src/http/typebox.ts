// TypeBox on Fastify routes: a route's schemas type its request and its replies, so a
// handler that returns another shape than its response schema does not compile.
import {
  Kind,
  Type,
  type Static,
  type TBoolean,
  type TInteger,
  type TNumber,
  type TSchema,
  type TString,
  type TUnsafe,
} from '@sinclair/typebox';
import type {
  FastifyBaseLogger,
  FastifyInstance,
  FastifyTypeProvider,
  RawReplyDefaultExpression,
  RawRequestDefaultExpression,
  RawServerDefault,
} from 'fastify';

export interface TypeBoxTypeProvider extends FastifyTypeProvider {
  validator: this['schema'] extends TSchema ? Static<this['schema']> : unknown;
  serializer: this['schema'] extends TSchema ? Static<this['schema']> : unknown;
}

/** What `app.withTypeProvider<TypeBoxTypeProvider>()` returns: routes typed by their schemas. */
export type TypeBoxFastify = FastifyInstance<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  FastifyBaseLogger,
  TypeBoxTypeProvider
>;

/**
 * A value of one JSON type or null, as `type: [T, 'null']`: Ajv and fast-json-stringify
 * check that in one step and name both types in one error, where a union (anyOf) is
 * tried branch by branch.
 */
export function Nullable<T extends TString | TNumber | TInteger | TBoolean>(schema: T): TUnsafe<Static<T> | null> {
  return Type.Unsafe<Static<T> | null>({ ...schema, [Kind]: 'Unsafe', type: [schema.type, 'null'] });
}

/**
 * A response schema's type, which must be exactly `T`, the JSON type the web app imports
 * (dashboard/api-types.ts, admin/api-types.ts): a field added, dropped or retyped on one
 * side only fails `tsc` at the schema (the error shows what it sends), before the web app
 * reads it wrong.
 */
export type JsonOf<S extends TSchema, T extends (Same<Static<S>, T> extends true ? unknown : { schemaSends: Static<S> })> = T;
// Exact, where assignability both ways lets an optional field differ. It also tells
// `A & B` from the same fields written out, so the api-types files name each shape as an interface.
type Same<A, B> = (<X>() => X extends A ? 1 : 2) extends (<X>() => X extends B ? 1 : 2) ? true : false;

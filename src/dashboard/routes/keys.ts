// The account's API keys: list, create with optional controls (the secret is shown once),
// edit (name and controls), revoke. A key with a credit limit is shown with what it spent
// in the limit's window, as the request path counts it.
import { keySpendLimit } from '../../billing/spend-limit.js';
import { Type } from '@sinclair/typebox';
import { NO_CONTROLS, parseControls } from '../../auth/key-controls.js';
import { Nullable, type TypeBoxFastify } from '../../http/typebox.js';
import type { ApiKeyRecord } from '../../store/store.js';
import type { FastifyRequest } from 'fastify';
import { Refusal } from '../../errors.js';
import { ownOnly, signedIn, type DashboardServices } from '../context.js';
import { MESSAGES, TRIM } from '../../validation/input-validator.js';
import { KeyView, keyView } from '../views.js';
import type { JsonOf } from '../../http/typebox.js';
import type * as Json from '../api-types.js';

const Name = Type.String({ [TRIM]: true, minLength: 1, maxLength: 100, [MESSAGES]: { minLength: 'Give the key a name.' } });
const List = Type.Union([Type.Array(Type.String({ maxLength: 200 }), { maxItems: 50 }), Type.Null()]);
/** Each control optional; null (or an empty list) clears it. auth/key-controls.ts checks what the schema cannot. */
const Controls = {
  expiresAt: Type.Optional(Nullable(Type.String({ maxLength: 40 }))),
  allowedModels: Type.Optional(List),
  allowedIps: Type.Optional(List),
  rpm: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: 1_000_000 }))),
  creditLimitMicros: Type.Optional(Nullable(Type.Integer({ minimum: 1 }))),
  creditLimitPeriod: Type.Optional(Type.Union([Type.Literal('total'), Type.Literal('month')])),
};
const CreateBody = Type.Object({ name: Name, ...Controls });
const UpdateBody = Type.Object({ name: Type.Optional(Name), ...Controls });
const KeyParams = Type.Object({ id: Type.String() });
const KeyList = Type.Object({ keys: Type.Array(KeyView) });
export type KeyList = JsonOf<typeof KeyList, Json.KeyList>;
const CreatedKey = Type.Object({ key: KeyView, secret: Type.String() });
export type CreatedKey = JsonOf<typeof CreatedKey, Json.CreatedKey>;
const OneKey = Type.Object({ key: KeyView });
export type OneKey = JsonOf<typeof OneKey, Json.OneKey>;

export function keyRoutes(dashboard: TypeBoxFastify, services: DashboardServices): void {
  const { store, commands } = services;
  const view = async (key: ApiKeyRecord): Promise<KeyView> => {
    const { creditLimit } = key.controls;
    return keyView(key, creditLimit === null ? null : await services.admission.spent(keySpendLimit(key.id, creditLimit)));
  };

  /** A `member` of an organisation changes only the keys they made: another's reads as missing. */
  const assertMayChange = async (request: FastifyRequest, keyId: string): Promise<string> => {
    const caller = signedIn(request);
    const member = ownOnly(caller, 'keys');
    if (member !== undefined && (await store.findKeyById(keyId))?.memberId !== member) throw new Refusal('key_not_found');
    return caller.account.id;
  };

  dashboard.get('/keys', { schema: { response: { 200: KeyList } } }, async (request) => {
    const caller = signedIn(request);
    const member = ownOnly(caller, 'keys');
    const keys = (await store.listKeys(caller.account.id)).filter((key) => member === undefined || key.memberId === member);
    return { keys: await Promise.all(keys.reverse().map(view)) };
  });

  dashboard.post('/keys', { schema: { body: CreateBody, response: { 201: CreatedKey } } }, async (request, reply) => {
    const { name, ...controls } = request.body;
    const { account, person } = signedIn(request);
    // An organisation's key names the member who made it; it stays the organisation's.
    const memberId = account.kind === 'org' ? person.id : null;
    const { record, secret } = await commands.keys.create(account.id, name, { ...NO_CONTROLS, ...parseControls(controls) }, undefined, memberId);
    return reply.code(201).send({ key: await view(record), secret });
  });

  dashboard.patch('/keys/:id', { schema: { params: KeyParams, body: UpdateBody, response: { 200: OneKey } } }, async (request) => {
    const { name, ...controls } = request.body;
    const key = await commands.keys.update(request.params.id, { name, controls: parseControls(controls) }, await assertMayChange(request, request.params.id));
    return { key: await view(key) };
  });

  dashboard.delete('/keys/:id', { schema: { params: KeyParams, response: { 200: OneKey } } }, async (request) => {
    const key = await commands.keys.revoke(request.params.id, await assertMayChange(request, request.params.id));
    return { key: await view(key) };
  });
}

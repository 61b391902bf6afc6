import { REFUSAL_REASONS } from '@bus/contracts';
import { openapi } from '@bus/schemas';

type Components = { components: { schemas: Record<string, unknown> } };

describe('the admin OpenAPI document', () => {
  it("describes a refused registration with the catalogue document's own validation answer", () => {
    // A registration is checked exactly as POST /api/skills/validate checks it, so the 422 body's
    // `answer` must be the very schema of that route's answer, not a look-alike that can drift.
    const admin = (openapi.admin as unknown as Components).components.schemas;
    const catalogue = (openapi.catalogue as unknown as Components).components.schemas;
    expect(admin.ValidationAnswer).toEqual(catalogue.ValidationAnswer);
    expect(admin.Version).toEqual(catalogue.Version);
  });

  it("describes a registration exactly as the bus document's consumer skills route returns it", () => {
    const admin = (openapi.admin as unknown as Components).components.schemas;
    const bus = (openapi.bus as unknown as Components).components.schemas;
    expect(bus.SkillRegistration).toEqual(admin.Registration);
  });

  it("describes a message trace exactly as the bus document's producer route returns it", () => {
    const admin = (openapi.admin as unknown as Components).components.schemas;
    const bus = (openapi.bus as unknown as Components).components.schemas;
    expect(admin.MessageTrace).toEqual(bus.MessageTrace);
    expect(admin.DeliveryTrace).toEqual(bus.DeliveryTrace);
  });

  it("names delivery's quarantine reasons exactly, wherever a reason appears", () => {
    const admin = openapi.admin as unknown as Components & { paths: Record<string, { get?: { parameters?: Array<{ name: string; schema: unknown }> } }> };
    const schemas = admin.components.schemas as Record<
      string,
      { properties?: Record<string, unknown>; oneOf?: Array<{ properties: Record<string, unknown> }> }
    >;
    const reasons = { enum: [...REFUSAL_REASONS] };
    expect(admin.paths['/api/admin/quarantine']?.get?.parameters?.find((p) => p.name === 'reason')?.schema).toEqual(reasons);
    expect(schemas.QuarantinedRecord?.properties?.reason).toMatchObject(reasons);
    expect(schemas.RedriveResult?.oneOf?.[1]?.properties.reason).toEqual(reasons);
  });
});

describe('the portal (people) OpenAPI document', () => {
  it("takes an app's permissions exactly as the admin API does (one request check for both)", () => {
    const portal = (openapi.portal as unknown as Components).components.schemas;
    const admin = (openapi.admin as unknown as Components).components.schemas;
    expect(portal.Permissions).toEqual(admin.Permissions);
  });

  it("describes a connection's principals, bindings and registrations exactly as the admin API does (the same operations answer both)", () => {
    const portal = (openapi.portal as unknown as Components).components.schemas;
    const admin = (openapi.admin as unknown as Components).components.schemas;
    for (const name of [
      'Principal',
      'Principals',
      'PrincipalCreate',
      'IssuedPrincipal',
      'PrincipalChallenge',
      'Binding',
      'Registration',
      'Registrations',
      'RegistrationRefused',
      'ValidationAnswer',
      'Version',
    ]) {
      expect([name, portal[name]]).toEqual([name, admin[name]]);
    }
  });

  it("answers a consumer's queue, its replays and a message trace exactly as the admin API does, and refusals as the producer's own route with the workspace and each refusal's story", () => {
    const portal = (openapi.portal as unknown as Components).components.schemas;
    const admin = (openapi.admin as unknown as Components).components.schemas;
    const bus = (openapi.bus as unknown as Components).components.schemas;
    for (const name of ['QueueStats', 'ReplayCreate', 'Replay', 'MessageTrace', 'DeliveryTrace']) expect([name, portal[name]]).toEqual([name, admin[name]]);
    expect(portal.Violation).toEqual(bus.Violation);
    // The portal adds the workspace and each refusal's story (its newest accepted message) to the producer's answer.
    type ObjectSchema = { properties: Record<string, unknown>; required: string[] };
    const without = (schema: unknown, added: string, also: Record<string, unknown> = {}) => {
      const { properties, required } = schema as ObjectSchema;
      const { [added]: _added, ...shared } = properties;
      return { ...(schema as ObjectSchema), properties: { ...shared, ...also }, required: required.filter((r) => r !== added) };
    };
    expect(without(portal.Refusal, 'story_message_id')).toEqual(bus.Refusal);
    // Its list says how many it holds (the portal's page); the rest is the producer's route's.
    const refusals = (portal.RecentRefusals as ObjectSchema).properties.refusals;
    expect(without(portal.RecentRefusals, 'workspace_id')).toEqual(without(bus.RecentRefusals, '', { refusals }));
  });

  it("describes the portal's dead letters exactly as the admin API answers them (one code path)", () => {
    const admin = (openapi.admin as unknown as Components).components.schemas;
    const portal = (openapi.portal as unknown as Components).components.schemas;
    for (const name of ['DeadLetter', 'DeadLetterList', 'ResolvedDeadLetter']) expect(portal[name]).toEqual(admin[name]);
  });
});

/**
 * CloudFormation refuses a template of more than 500 resources, 200 parameters or 200 outputs. The service is
 * split so that every template stays well under them: each area's functions in a nested stack of that area,
 * the alarms in the monitoring one, and what areas share in the parent. The budgets below leave room for a dozen
 * more routes and workers in any one area (a route adds three resources to the parent: route, integration,
 * permission; and four to its area: function, role, policy, log group; and one alarm to monitoring).
 */
import type { NestedStack, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { type HttpRoute, type Wiring, wiring } from '../../lib/wiring';
import { devSettings, prodSettings, type SynthesizedStack, synthesize } from './synth';

const BUDGETS = { parent: 300, area: 150, monitoring: 200, parameters: 150, outputs: 150 } as const;

interface TemplateJson {
  readonly Resources: Record<string, { readonly Type: string }>;
  readonly Parameters?: Record<string, unknown>;
  readonly Outputs?: Record<string, unknown>;
}

const templateOf = (stack: Stack): TemplateJson => Template.fromStack(stack).toJSON() as TemplateJson;

const expectWithinBudget = (name: string, stack: Stack, resourceBudget: number) => {
  const template = templateOf(stack);
  const resources = Object.keys(template.Resources).length;
  expect(resources, `${name}: ${resources} resources, budget ${resourceBudget}`).toBeLessThanOrEqual(
    resourceBudget,
  );
  const parameters = Object.keys(template.Parameters ?? {}).length;
  expect(parameters, `${name}: ${parameters} parameters`).toBeLessThanOrEqual(BUDGETS.parameters);
  const outputs = Object.keys(template.Outputs ?? {}).length;
  expect(outputs, `${name}: ${outputs} outputs`).toBeLessThanOrEqual(BUDGETS.outputs);
};

describe.each([
  ['development stage', devSettings],
  ['production-like stage (full monitoring)', prodSettings],
])('%s', (_name, settings) => {
  let synth: SynthesizedStack;
  beforeAll(() => {
    synth = synthesize(settings());
  });

  it('keeps the parent, every area stack and the monitoring stack within their budgets', () => {
    expectWithinBudget('parent', synth.stack, BUDGETS.parent);
    expect([...synth.stack.functionStacks.keys()]).toEqual(Object.keys(wiring.areas ?? {}));
    for (const [area, stack] of synth.stack.functionStacks) expectWithinBudget(area, stack, BUDGETS.area);
    expectWithinBudget('monitoring', synth.stack.monitoring.nestedStack, BUDGETS.monitoring);
  });

  it('holds no function in the parent: each one is in the nested stack of the area declaring it', () => {
    synth.parentTemplate.resourceCountIs('AWS::Lambda::Function', 0);
    for (const [area, part] of Object.entries(wiring.areas ?? {})) {
      const stack = synth.stack.functionStacks.get(area) as NestedStack;
      const declared =
        (part.httpRoutes?.length ?? 0) +
        (part.webSocketRoutes?.length ?? 0) +
        (part.workers?.length ?? 0) +
        (part.busFunctions?.length ?? 0) +
        (part.recurringSchedules?.length ?? 0);
      Template.fromStack(stack).resourceCountIs('AWS::Lambda::Function', declared);
    }
  });
});

describe('a route added to an area', () => {
  it('lands in the nested stack of that area, its API route in the parent', () => {
    const areas = wiring.areas ?? {};
    const added: HttpRoute = {
      id: 'webhooks.added',
      method: 'GET',
      path: '/webhooks-added',
      handler: 'lambdas/handlers/http/health/live.ts',
      access: { users: 'any' },
    };
    const webhooks = { ...areas.webhooks, httpRoutes: [...(areas.webhooks?.httpRoutes ?? []), added] };
    const grown: Wiring = {
      ...wiring,
      httpRoutes: [...wiring.httpRoutes, added],
      areas: { ...areas, webhooks },
    };
    const synth = synthesize(devSettings(), grown);
    const fn = synth.stack.functions.get('http:webhooks.added');
    expect(fn && synth.stack.functionStacks.get('webhooks')?.node.findAll().includes(fn)).toBe(true);
    synth.parentTemplate.hasResourceProperties('AWS::ApiGatewayV2::Route', {
      RouteKey: 'GET /api/v1/webhooks-added',
    });
    // A whole synth in the test itself: as long as a beforeAll's.
  }, 90_000);
});

/**
 * domains: API Gateway custom domains for the HTTP API (without waf) and the WebSocket API; with waf the HTTP
 * API's name is served by CloudFront (test/cdk/waf.test.ts).
 */
import { App } from 'aws-cdk-lib';
import { Match, type Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { beforeAll, describe, expect, it } from 'vitest';
import { addNotifyStacks } from '../../lib/app';
import { StageConfigError, type StageSettings } from '../../lib/config/stage-config';
import { prodSettings, type SynthesizedStack, stageFileFrom, synthesize } from './synth';

const CERTIFICATE = 'arn:aws:acm:eu-west-1:123456789012:certificate/1a2b3c4d-5e6f-7a8b-9c0d-1e2f3a4b5c6d';

const settingsWithDomains = (): StageSettings =>
  prodSettings({
    domains: {
      http: { name: 'api.notify.example.test', certificate_arn: CERTIFICATE },
      websocket: { name: 'rt.notify.example.test', certificate_arn: CERTIFICATE },
    },
  });

describe('custom domains on API Gateway', () => {
  let synth: SynthesizedStack;
  let template: Template;

  beforeAll(() => {
    synth = synthesize(settingsWithDomains());
    template = synth.template;
  });

  it('gives each API a regional domain with its certificate and TLS 1.2', () => {
    template.resourceCountIs('AWS::ApiGatewayV2::DomainName', 2);
    for (const name of ['api.notify.example.test', 'rt.notify.example.test']) {
      template.hasResourceProperties('AWS::ApiGatewayV2::DomainName', {
        DomainName: name,
        DomainNameConfigurations: [
          Match.objectLike({
            CertificateArn: CERTIFICATE,
            EndpointType: 'REGIONAL',
            SecurityPolicy: 'TLS_1_2',
          }),
        ],
      });
    }
  });

  it('maps the HTTP stage at the root and the WebSocket stage under /ws, as locally', () => {
    const mappings = Object.values(template.findResources('AWS::ApiGatewayV2::ApiMapping')) as {
      Properties: Record<string, unknown>;
    }[];
    expect(mappings).toHaveLength(2);
    const httpApiId = synth.stack.getLogicalId(synth.stack.httpApi?.api.node.defaultChild as never);
    const wsApiId = synth.stack.getLogicalId(synth.stack.webSocketApi?.api.node.defaultChild as never);
    const byApi = (id: string) =>
      mappings.find((mapping) => JSON.stringify(mapping.Properties.ApiId).includes(id));
    expect(byApi(httpApiId)?.Properties.ApiMappingKey).toBeUndefined();
    expect(byApi(wsApiId)?.Properties.ApiMappingKey).toBe('ws');
  });

  it('gives the custom URLs as outputs, and the targets of the DNS records', () => {
    const domainId = (api: 'httpApi' | 'webSocketApi') =>
      synth.stack.getLogicalId(synth.stack[api]?.customDomain?.node.defaultChild as never);
    // The name by reference, so the outputs wait for the domains to exist.
    template.hasOutput('HttpApiUrl', {
      Value: { 'Fn::Join': ['', ['https://', { Ref: domainId('httpApi') }, '/api/v1']] },
    });
    template.hasOutput('WebSocketUrl', {
      Value: { 'Fn::Join': ['', ['wss://', { Ref: domainId('webSocketApi') }, '/ws']] },
    });
    expect(synth.stack.resolve(synth.stack.httpApi?.customDomain?.name)).toEqual({
      Ref: domainId('httpApi'),
    });
    template.hasResourceProperties('AWS::ApiGatewayV2::DomainName', {
      DomainName: 'api.notify.example.test',
    });
    template.hasOutput('HttpApiDomainTarget', {
      Value: { 'Fn::GetAtt': [Match.anyValue(), 'RegionalDomainName'] },
    });
    template.hasOutput('WebSocketDomainTarget', {
      Value: { 'Fn::GetAtt': [Match.anyValue(), 'RegionalDomainName'] },
    });
  });

  it('keeps @connections on the execute-api endpoint (the management API is not on custom domains)', () => {
    const variables = JSON.stringify(template.findResources('AWS::Lambda::Function'));
    expect(variables).toContain('execute-api');
    expect(variables).not.toContain('rt.notify.example.test');
  });

  it('passes cdk-nag AwsSolutions', () => {
    const report = new AwsSolutionsChecks(synth.app).validateScope(synth.stack);
    expect(report.violations.map((violation) => violation.ruleName)).toEqual([]);
  });
});

describe('custom domain certificates in the wrong region', () => {
  it('refuses a regional domain whose certificate is not in the service region', () => {
    const config = stageFileFrom('test/cdk/fixtures/prod-waf-existing-acl.json', { region: 'us-west-2' });
    const app = new App({ context: { stage: 'prod', config } });
    let error: unknown;
    try {
      addNotifyStacks(app, { env: { account: '123456789012', region: 'eu-west-1' } });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(StageConfigError);
    expect((error as Error).message).toMatch(
      /domains\.websocket\.certificate_arn is in eu-west-1.*\(us-west-2\)/,
    );
    expect(app.node.children).toHaveLength(0);
  });
});

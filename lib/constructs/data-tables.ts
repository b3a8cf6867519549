import type { RemovalPolicy } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import { Construct } from 'constructs';
import type { IndexSpec, KeyAttribute, LocalIndexSpec, TableSpec } from '../wiring';
import { pascalCase } from './naming';

export interface DataTablesProps {
  readonly specs: readonly TableSpec[];
  readonly removalPolicy: RemovalPolicy;
  /** Refuse deletes of the table through the API as well (stages whose data is kept). */
  readonly deletionProtection: boolean;
}

const attribute = (key: KeyAttribute): dynamodb.Attribute => ({
  name: key.name,
  type: key.type === 'S' ? dynamodb.AttributeType.STRING : dynamodb.AttributeType.NUMBER,
});

const projection = (spec: IndexSpec['projection'] | LocalIndexSpec['projection']) =>
  spec === 'keys'
    ? { projectionType: dynamodb.ProjectionType.KEYS_ONLY }
    : spec === 'all'
      ? { projectionType: dynamodb.ProjectionType.ALL }
      : { projectionType: dynamodb.ProjectionType.INCLUDE, nonKeyAttributes: [...spec] };

/** The DynamoDB tables of the declaration: on-demand, TTL, point-in-time recovery, indexes as declared. */
export class DataTables extends Construct {
  private readonly byId = new Map<string, dynamodb.Table>();

  constructor(scope: Construct, id: string, props: DataTablesProps) {
    super(scope, id);
    for (const spec of props.specs) {
      if (this.byId.has(spec.id)) throw new Error(`lib/wiring: table "${spec.id}" is declared twice`);
      const table = new dynamodb.Table(this, pascalCase(spec.deployedAs ?? spec.id), {
        partitionKey: attribute(spec.partitionKey),
        sortKey: spec.sortKey ? attribute(spec.sortKey) : undefined,
        billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
        timeToLiveAttribute: spec.ttlAttribute,
        pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
        // The AWS managed key: key use shows in CloudTrail, no key to administer; DynamoDB caches the data
        // key, so KMS requests stay few.
        encryption: dynamodb.TableEncryption.AWS_MANAGED,
        removalPolicy: props.removalPolicy,
        deletionProtection: props.deletionProtection,
      });
      for (const index of spec.globalIndexes ?? []) {
        table.addGlobalSecondaryIndex({
          indexName: index.name,
          partitionKey: attribute(index.partitionKey),
          sortKey: index.sortKey ? attribute(index.sortKey) : undefined,
          ...projection(index.projection),
        });
      }
      for (const index of spec.localIndexes ?? []) {
        table.addLocalSecondaryIndex({
          indexName: index.name,
          sortKey: attribute(index.sortKey),
          ...projection(index.projection),
        });
      }
      this.byId.set(spec.id, table);
    }
  }

  /** Every declared table by id, in declaration order. */
  get all(): readonly { readonly id: string; readonly table: dynamodb.Table }[] {
    return [...this.byId].map(([id, table]) => ({ id, table }));
  }

  /** The table of a declared id; throws naming the user of an undeclared one. */
  table(id: string, usedBy: string): dynamodb.Table {
    const table = this.byId.get(id);
    if (!table) throw new Error(`lib/wiring: ${usedBy} uses table "${id}", which is not declared`);
    return table;
  }
}

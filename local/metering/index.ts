export * from './connections-endpoint';
export * from './dynamodb-proxy';
export * from './gateway-meter';
export * from './usage-meter';

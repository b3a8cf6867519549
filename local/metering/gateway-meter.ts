/**
 * What the local API Gateway stand-ins report for billing: API Gateway bills HTTP API requests, WebSocket
 * messages in both directions (each started 32 KiB a message) and connection minutes.
 */
export interface GatewayMeter {
  /** An HTTP API request that reached a route (or was answered by the gateway itself). */
  httpRequest(): void;
  /** A WebSocket message received from a client (`in`) or sent to one (`out`), with its size. */
  webSocketMessage(direction: 'in' | 'out', bytes: number): void;
  webSocketOpened(connectionId: string): void;
  webSocketClosed(connectionId: string): void;
  /** A GetConnection of the `@connections` API: not billed, counted so a bench can say how many checks it made. */
  connectionChecked?(): void;
}

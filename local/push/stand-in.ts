export interface ReceivedPush {
  readonly provider: string;
  readonly token: string;
  readonly push_id: string | null;
  readonly headers: Readonly<Record<string, string>>;
  readonly payload: unknown;
  readonly at: string;
}
export interface PushStandIn {
  readonly provider: string;
  readonly url: string;
  received(): readonly ReceivedPush[];
  markDead(token: string): void;
  close(): Promise<void>;
}

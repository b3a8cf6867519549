/** A small typed event emitter: `on` returns the function that removes the listener. */
export class Emitter<Events extends object> {
  private readonly listeners = new Map<keyof Events, Set<(payload: never) => void>>();

  on<K extends keyof Events>(event: K, listener: (payload: Events[K]) => void): () => void {
    const set = this.listeners.get(event) ?? new Set();
    this.listeners.set(event, set);
    set.add(listener as (payload: never) => void);
    return () => set.delete(listener as (payload: never) => void);
  }

  protected emit<K extends keyof Events>(event: K, payload: Events[K]): void {
    for (const listener of [...(this.listeners.get(event) ?? [])]) {
      try {
        (listener as (payload: Events[K]) => void)(payload);
      } catch (error) {
        // A throwing listener must not break the connection's state machine; report it where apps see it.
        setTimeout(() => {
          throw error;
        });
      }
    }
  }
}

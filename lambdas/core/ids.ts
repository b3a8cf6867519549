import { v7 as uuidv7 } from 'uuid';

/** Time-ordered identifiers (UUID v7): sortable by creation time, so they double as sort keys. */
export const newId = (): string => uuidv7();

export const newIdAt = (epochMs: number): string => uuidv7({ msecs: epochMs });

/** The creation time encoded in a UUID v7. */
export const timeOfId = (id: string): number => Number.parseInt(id.replaceAll('-', '').slice(0, 12), 16);

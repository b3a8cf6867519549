/** Contract §3: topic names. Apart from schema.ts so that code checking a name does not load zod. */
import { IDENTIFIER_CHARACTERS } from '../../core/identifiers';

export const TOPIC_NAME = new RegExp(`^[a-z0-9][a-z0-9._-]{0,${IDENTIFIER_CHARACTERS.topicName - 1}}$`);

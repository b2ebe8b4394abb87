// Names and limits that the routes, the procedures and the console must agree on. Plain constants
// with no imports, so the console's browser bundle can import them as well as the broker.

/**
 * The consumer group of a pop or ack that names none ("queue mode"). Queen's clients send and read
 * this exact text, and the procedures keep queue mode's cursors under it, so it is part of the wire
 * format, not a display choice; the console shows it as "queue mode".
 */
export const QUEUE_MODE = '__QUEUE_MODE__'

/** The longest queue, partition, consumer-group, transaction-id or stream-query name a route accepts. */
export const NAME_MAX = 255

// The ack statuses the engine acts on (sql/procedures/005_log_ack_per_item.sql): any other text is
// answered per item as `invalid_status`, and the metrics count it as `invalid`.
export const ACK_STATUSES = ['completed', 'success', 'failed', 'retry', 'dlq'] as const

import { statement } from './statement';

/**
 * Where a purge stops: the delivery sequence's last value when it begins. Every delivery with an id up
 * to it was inserted before (or by an enqueue committing meanwhile); one enqueued after keeps its
 * place, so a message published after the purge is received normally. The sequence is read, not
 * the table: no scan of the backlog.
 */
export const PURGE_MARK = statement('purge-mark', `SELECT last_value AS mark FROM deliveries_id_seq`);

import type { ComponentChildren, VNode } from 'preact';

/** A live region beside a control: the script says there what succeeded or was refused. */
export function SaidRegion({ id }: { id: string }) {
  return <span class="said" role="status" id={id} />;
}

/** A time as the API gives it (UTC); the script shows it in the person's time zone with how long ago. */
export function Time({ at }: { at: string | Date | null | undefined }) {
  if (at === null || at === undefined || at === '') return null;
  const iso = at instanceof Date ? at.toISOString() : at;
  return <time datetime={iso}>{iso}</time>;
}

interface TableProps {
  caption: ComponentChildren;
  /** The column headings, in order. */
  columns: readonly string[];
  /** One <tr> per item, as many cells as columns. */
  rows: readonly VNode[];
  /** What the one full-width row says when there are no rows. */
  empty: ComponentChildren;
  /**
   * Wrapped in a box of its own that scrolls sideways on a narrow window (the style sheet's .table-scroll),
   * focusable and named by the caption so a keyboard can scroll it too.
   */
  scrolls?: boolean;
  class?: string;
}

/** A table of items under column headings, saying so when there are none. */
export function Table({ caption, columns, rows, empty, scrolls = false, class: className }: TableProps) {
  const table = (
    <table class={className}>
      <caption>{caption}</caption>
      <thead>
        <tr>
          {columns.map((column) => (
            <th scope="col">{column}</th>
          ))}
        </tr>
      </thead>
      <tbody>
        {rows.length > 0 ? (
          rows
        ) : (
          <tr>
            <td colspan={columns.length}>{empty}</td>
          </tr>
        )}
      </tbody>
    </table>
  );
  if (!scrolls) return table;
  return (
    <div class="table-scroll" tabindex={0} role="region" aria-label={typeof caption === 'string' ? caption : undefined}>
      {table}
    </div>
  );
}

/** A row of a table of facts about one thing: its name as the row's heading, then its value cell(s). */
export function Fact({ name, children }: { name: string; children: ComponentChildren }) {
  return (
    <tr>
      <th scope="row">{name}</th>
      {children}
    </tr>
  );
}

/** The steps of a Server-Timing value in their order, name → milliseconds. */
export function stepsOf(value: string | null): Record<string, number> {
  return Object.fromEntries(
    (value ?? '').split(', ').map((entry) => {
      const [name, dur] = entry.split(';dur=');
      return [name, Number(dur)];
    }),
  );
}

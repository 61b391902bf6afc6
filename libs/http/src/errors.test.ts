import { DependencyUnavailableError, HttpError, unavailableOnAnyFailure } from './errors';

class Store {
  readonly name = 'store';
  constructor(private readonly rows: string[]) {}
  async row(i: number): Promise<string> {
    if (i < 0) throw new HttpError(409, 'admin.conflict', 'No negative rows');
    const found = this.rows[i];
    if (found === undefined) throw new Error('connect ECONNREFUSED 127.0.0.1:5432');
    return found;
  }
}

const unavailable = (cause: unknown) => new DependencyUnavailableError('admin.unavailable', 'Postgres could not be reached', cause);

describe('unavailableOnAnyFailure', () => {
  it('answers what the methods answer, with their own `this`, and leaves other properties alone', async () => {
    const store = unavailableOnAnyFailure(new Store(['a']), unavailable);
    await expect(store.row(0)).resolves.toBe('a');
    expect(store.name).toBe('store');
  });

  it("turns any failure of a method into the 503, keeping the dependency's error as its cause", async () => {
    const failure = await unavailableOnAnyFailure(new Store([]), unavailable)
      .row(3)
      .catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(DependencyUnavailableError);
    expect(failure).toMatchObject({ status: 503, rule: 'admin.unavailable', headers: { 'Retry-After': '1' } });
    expect(((failure as Error).cause as Error).message).toBe('connect ECONNREFUSED 127.0.0.1:5432');
  });

  it("lets a method's own HttpError through: it is already the route's answer", async () => {
    await expect(unavailableOnAnyFailure(new Store([]), unavailable).row(-1)).rejects.toMatchObject({ status: 409, rule: 'admin.conflict' });
  });
});

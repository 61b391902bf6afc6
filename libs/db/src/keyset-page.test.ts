import { pageOfRows } from './keyset-page';

describe('pageOfRows', () => {
  const rows = (n: number) => Array.from({ length: n }, (_, i) => ({ id: `r${i}` }));

  it('names the last item of a full page when the extra row says more follow', () => {
    expect(pageOfRows(rows(4), 3, (r) => r.id)).toEqual({ items: rows(3), nextAfter: 'r2' });
  });

  it('ends the listing on a page the extra row did not come with', () => {
    expect(pageOfRows(rows(3), 3, (r) => r.id)).toEqual({ items: rows(3), nextAfter: null });
    expect(pageOfRows(rows(0), 3, (r) => r.id)).toEqual({ items: [], nextAfter: null });
  });
});

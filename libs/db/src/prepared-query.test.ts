import { positionalStatement } from './prepared-query';

describe('positionalStatement', () => {
  it('numbers named bindings in order of first use, a repeated name keeping its position', () => {
    expect(positionalStatement('select :a, :b where x = :a and y < :c_2')).toEqual({
      text: 'select $1, $2 where x = $1 and y < $3',
      names: ['a', 'b', 'c_2'],
    });
  });

  it('leaves ::casts, and colons inside words, alone', () => {
    expect(positionalStatement(`select :ids::bigint[], now()::date, 'a:b'`)).toEqual({
      text: `select $1::bigint[], now()::date, 'a:b'`,
      names: ['ids'],
    });
  });
});

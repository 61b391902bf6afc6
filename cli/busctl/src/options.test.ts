import { parseCommandOptions } from './options';

const options = { name: { type: 'string' }, tag: { type: 'string', multiple: true }, json: { type: 'boolean' } } as const;

describe('parseCommandOptions', () => {
  it('refuses an option of one value given twice, in either spelling, rather than keeping the last', () => {
    expect(() => parseCommandOptions({ args: ['--name', 'a', '--name', 'b'], options })).toThrow('--name is given more than once');
    expect(() => parseCommandOptions({ args: ['--name=a', '--name', 'b'], options })).toThrow('--name is given more than once');
    expect(() => parseCommandOptions({ args: ['--json', '--json'], options })).toThrow('--json is given more than once');
  });

  it('lets a multiple option repeat and reads the rest as parseArgs does, strictly', () => {
    expect(parseCommandOptions({ args: ['--tag', 'a', '--tag', 'b', '--name', 'n'], options }).values).toEqual({ tag: ['a', 'b'], name: 'n' });
    expect(() => parseCommandOptions({ args: ['--other'], options })).toThrow(expect.objectContaining({ code: 'ERR_PARSE_ARGS_UNKNOWN_OPTION' }));
  });
});

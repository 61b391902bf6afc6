import { returnPathOf } from './sign-in';

describe('the page a sign-in returns to (returnPathOf)', () => {
  it.each([
    ['/portal/workspaces/wabcdefghijk2', '/portal/workspaces/wabcdefghijk2'],
    ['/portal/connections/c.2..x', '/portal/connections/c.2..x'],
    [
      '/portal/trace?workspace=wabcdefghijk2&message_id=6f1c2a4e-8b7d-4c3a-9e2f-1a2b3c4d5e6f',
      '/portal/trace?workspace=wabcdefghijk2&message_id=6f1c2a4e-8b7d-4c3a-9e2f-1a2b3c4d5e6f',
    ],
  ])('returns to a page of the portal: %s', (asked, back) => {
    expect(returnPathOf(asked)).toBe(back);
  });

  it.each([
    ['another origin', 'https://evil.example/portal/'],
    ['a protocol-relative address', '//evil.example/portal/'],
    ['a second slash after /portal/', '/portal//evil.example'],
    ['a backslash', '/portal/\\evil.example'],
    ['a path outside the portal', '/api/portal/me'],
    ['a dot-dot segment', '/portal/../api/admin/organisations'],
    ['a dot-dot segment at the end', '/portal/workspaces/..'],
    ['an encoded dot-dot segment', '/portal/%2e%2e/api/admin/organisations'],
    ['an upper-case encoded dot-dot segment', '/portal/%2E%2E/api/admin/organisations'],
    ['a half-encoded dot-dot segment', '/portal/.%2E/api/admin/organisations'],
    ['the other half-encoded dot-dot segment', '/portal/%2e./api/admin/organisations'],
    ['a dot-dot segment deeper down', '/portal/workspaces/../../api/admin/organisations'],
    ['a dot segment', '/portal/./workspaces'],
    ['an encoded dot segment', '/portal/%2e/workspaces'],
    ['a backslash before a dot-dot segment', '/portal/..\\api/admin/organisations'],
    ['a line break', '/portal/x\r\nSet-Cookie: a=b'],
    ['an overlong path', `/portal/${'a'.repeat(1000)}`],
    ['not a string', ['/portal/x']],
  ])('never returns to %s', (_what, asked) => {
    expect(returnPathOf(asked)).toBeUndefined();
  });
});

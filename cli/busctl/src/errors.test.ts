import { openapi } from '@bus/schemas';
import { createOpenApiChecker } from '@bus/testing';
import { renderApiError } from './errors';

describe('renderApiError', () => {
  it("prints the API's code, message and request id", () => {
    const body = { code: 'admin.not_found', message: 'No connection cabcdefghijkl', request_id: 'req-1' };
    expect(renderApiError(404, body, JSON.stringify(body), null)).toBe(
      'busctl: the API refused (404 admin.not_found): No connection cabcdefghijkl [request req-1]\n',
    );
  });

  it('says which variables hold the operator credentials on 401', () => {
    const body = { code: 'admin.unauthorized', message: 'Operator credentials required' };
    expect(renderApiError(401, body, '', null)).toBe(
      'busctl: the API refused (401 admin.unauthorized): Operator credentials required\nCheck BUSCTL_CLIENT_ID and BUSCTL_CLIENT_SECRET (the operator credentials).\n',
    );
  });

  it('says when to retry on 429', () => {
    expect(renderApiError(429, { code: 'rate.limited', message: 'Too many requests' }, '', '3')).toBe(
      'busctl: the API refused (429 rate.limited): Too many requests\nRetry after 3 seconds.\n',
    );
  });

  it("lists each instance's problems and the answer's own for registration.invalid", () => {
    const body = {
      code: 'registration.invalid',
      message: 'The skills file has problems; nothing was registered',
      request_id: 'req-2',
      answer: {
        valid: false,
        library_version: '0.2.2',
        checked: 'list',
        instances: [
          { index: 0, instance_label: 'speaker pacing', skill_id: 'telling/pacing', valid: true, problems: [] },
          {
            index: 1,
            instance_label: 'locale',
            skill_id: 'telling/locale-match',
            valid: false,
            problems: [
              'values.locale_path: "story.langauge" is not a path of SOM 1.0 story.context',
              'values.match: "\u001b[2J" is not one of language, region',
            ],
          },
          { index: 2, instance_label: null, skill_id: null, valid: false, problems: ['skill_id: required'] },
        ],
        problems: ['instance_label "locale" is used twice'],
      },
    };
    // The portal's answer as admin.json documents it (busctl reads what the portal sends).
    const headers = { 'x-request-id': 'req-2', 'cache-control': 'no-store', 'content-type': 'application/json' };
    createOpenApiChecker(openapi.admin).check('POST', '/api/admin/connections/cabcdefghijkl/registrations', { status: 422, headers, body });
    expect(renderApiError(422, body, '', null)).toBe(
      [
        'busctl: the API refused (422 registration.invalid): The skills file has problems; nothing was registered [request req-2]',
        '  - instance_label "locale" is used twice',
        '  instance 0 (speaker pacing telling/pacing): valid',
        '  instance 1 (locale telling/locale-match): invalid',
        '    - values.locale_path: "story.langauge" is not a path of SOM 1.0 story.context',
        '    - values.match: " [2J" is not one of language, region',
        '  instance 2: invalid',
        '    - skill_id: required',
        '',
      ].join('\n'),
    );
  });

  it('quotes the start of a body that is not the API error body (a proxy page, say)', () => {
    const html = `<html><body>\u001b[2JBad gateway${'.'.repeat(300)}</body></html>`;
    expect(renderApiError(502, null, html, null)).toBe(`busctl: the API answered 502: <html><body> [2JBad gateway${'.'.repeat(173)}\n`);
    expect(renderApiError(503, null, '', null)).toBe('busctl: the API answered 503\n');
    expect(renderApiError(500, { error: 'x' }, '{"error":"x"}', null)).toBe('busctl: the API answered 500: {"error":"x"}\n');
  });
});

import type { ErrorPage } from '@bus/http';
import { pagePolicy, renderPage, type OrganisationNames } from './layout';
import { sessionOf } from './sign-in';

const PAGE_PATH = /^\/portal(\/|$)/;

/**
 * The pages' errors (and the sign-in's) as a page a person can read, with the way back; the portal
 * API (/api/portal) and every other route keep their JSON bodies. Rendered by the one error
 * middleware (libs/http), which also logs what it must.
 */
export const portalErrorPage: ErrorPage = (req, err, requestId) => {
  if (!PAGE_PATH.test(req.path)) return undefined;
  // A signed-in person keeps the navigation (a wrong link is not the end of the way).
  const locals = req.res?.locals;
  const session = req.res && err.status !== 401 ? sessionOf(req.res) : undefined;
  const body = <ErrorMessage status={err.status} message={err.message} code={err.rule} requestId={requestId} />;
  const html = renderPage(`Error ${err.status}`, session, body, locals?.organisationNames as OrganisationNames | undefined);
  return { html, headers: { 'Content-Security-Policy': pagePolicy(req.res) } };
};

function ErrorMessage({ status, message, code, requestId }: { status: number; message: string; code: string; requestId: string }) {
  return (
    <>
      <h1>
        {status}: {message}
      </h1>
      <p>
        Code <code>{code}</code>, request id <code>{requestId}</code>.
      </p>
      <p>{status === 401 ? <a href="/portal/login">Sign in again</a> : <a href="/portal">Back to the portal</a>}</p>
    </>
  );
}

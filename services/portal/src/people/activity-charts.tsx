import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Router } from 'express';
import { createRouter } from '@bus/http';
import { ACTIVITY_SCRIPT } from './assets';

/**
 * Chart.js's UMD build from the portal's own dependency (no CDN: the pages' policy is script-src
 * 'self'), read once. Its path names the version, so a browser may keep it for a year: an upgrade is
 * a new path. The source-map comment goes (the map is not served).
 */
function chartLibrary(): { path: string; source: string } {
  const dist = path.dirname(require.resolve('chart.js'));
  const { version } = JSON.parse(readFileSync(path.join(dist, '..', 'package.json'), 'utf8')) as { version: string };
  const source = readFileSync(path.join(dist, 'chart.umd.min.js'), 'utf8').replace(/\n\/\/# sourceMappingURL=\S+\s*$/, '\n');
  return { path: `/portal/assets/chart-${version}.umd.min.js`, source };
}

const CHART = chartLibrary();

/** The chart library and the charts' script (assets.ts ACTIVITY_SCRIPT), as the pages with charts load them. */
export function activityAssets(): Router {
  const router = createRouter();
  router.get(CHART.path, (_req, res) => {
    res.type('text/javascript').set('Cache-Control', 'public, max-age=31536000, immutable').send(CHART.source);
  });
  router.get('/portal/assets/activity.js', (_req, res) => {
    res.type('text/javascript').set('Cache-Control', 'no-cache').send(ACTIVITY_SCRIPT);
  });
  return router;
}

/** Which charts a page shows: the workspace's all three; a producer's its messages and refusals; a consumer's its messages and queue. */
export interface ActivityCharts {
  /** The activity route the script reads (portal.json workspaceActivity or connectionActivity). */
  api: string;
  /** What the charts are of, in the headings ("this workspace", "this connection"). */
  of: string;
  queue: boolean;
  refusals: boolean;
}

/** The minutes the pages chart (the API answers up to the store's 24 hours). */
export const CHARTED_MINUTES = 60;

/**
 * The charts' section (docs/portal.md#activity-charts): one figure per chart, each a canvas the
 * script draws (role img, named) and its text alternative, a summary and a table of the minutes
 * with activity in a <details>, which the script fills from the same answer. Without the script the
 * section says where the numbers are.
 */
export function ActivitySection({ charts }: { charts: ActivityCharts }) {
  return (
    <section class="activity" aria-labelledby="activity-heading" data-activity={`${charts.api}?minutes=${CHARTED_MINUTES}`}>
      <h2 id="activity-heading">
        Activity of {charts.of}, the last {CHARTED_MINUTES} minutes
      </h2>
      <p>Per minute, in your time zone. Best effort: counts reach the charts within seconds, and a restart can lose the last few seconds' counts.</p>
      <ChartFigure id="messages" title="Messages per minute" description="Published, delivered and acked messages per minute." />
      {charts.queue && (
        <ChartFigure
          id="queue"
          title="Queue depth and oldest message"
          description="Un-acked messages and the age of the oldest, sampled about every 15 seconds."
        />
      )}
      {charts.refusals && (
        <ChartFigure id="refusals" title="Refusals by rule" description="Publishes the gateway refused per minute, by the rule that refused them." />
      )}
      <script src={CHART.path} defer />
      <script src="/portal/assets/activity.js" defer />
    </section>
  );
}

function ChartFigure({ id, title, description }: { id: string; title: string; description: string }) {
  return (
    <figure class="chart" id={`chart-${id}`} data-chart={id}>
      <figcaption id={`chart-${id}-title`}>{title}</figcaption>
      <div class="chart-box">
        <canvas role="img" aria-labelledby={`chart-${id}-title`} aria-describedby={`chart-${id}-summary`} />
      </div>
      <p class="chart-summary" id={`chart-${id}-summary`}>
        {description}
      </p>
      <details>
        <summary>The numbers of {title.toLowerCase()}</summary>
        <div class="table-scroll" data-table="" />
      </details>
    </figure>
  );
}

import type { Router } from 'express';
import type { SkillLibrary } from '@bus/skills';
import { AdminNotFoundError } from '../errors';
import { esc, sendPage } from './layout';
import { requireSession } from './sign-in';
import { createRouter } from '@bus/http';

/**
 * The skill library browser (docs/portal.md): the carried versions, the skills of a version and the
 * fields of a skill, rendered from the very answers GET /api/skills/library serves (the catalogue's
 * SkillLibrary). The library is public, so every signed-in person reads it.
 */
export function libraryPages(deps: { library: SkillLibrary }): Router {
  const router = createRouter();
  const answerOf = (version: string) => deps.library.answer(version) ?? notFound('skill library version', version);

  router.get('/portal/library', (_req, res) => {
    const session = requireSession(res);
    const rows = deps.library.versions.map(
      (v) =>
        `<tr><td><a href="/portal/library/${esc(v.info.version)}">${esc(v.info.version)}</a></td><td>${v.info.status}</td><td>${esc(v.info.suite)}</td><td>${v.skills.length}</td></tr>`,
    );
    sendPage(
      res,
      'Skill library',
      session,
      `<h1>Skill library</h1>
<p>The versions this bus carries (also at <a href="/api/skills/library">/api/skills/library</a>); new instances use the current one.</p>
<table><caption>Library versions, newest first</caption><thead><tr><th scope="col">Version</th><th scope="col">Status</th><th scope="col">Suite</th><th scope="col">Skills</th></tr></thead><tbody>
${rows.join('\n')}
</tbody></table>`,
    );
  });

  router.get('/portal/library/:version', (req, res) => {
    const session = requireSession(res);
    const answer = answerOf(String(req.params.version));
    const version = answer.library.version;
    const rows = answer.skills.map(
      (s) =>
        `<tr><td><a href="/portal/library/${esc(version)}/skills/${esc(s.skill_id)}"><code>${esc(s.skill_id)}</code></a></td><td>${esc(s.name)}</td><td>${esc(s.category)}</td><td>${esc(s.severity_range.join(' – '))}</td><td>${s.fields.length}</td></tr>`,
    );
    sendPage(
      res,
      `Skill library ${version}`,
      session,
      `<h1>Skill library ${esc(version)} <small>(${answer.library.status}, ${esc(answer.library.suite)})</small></h1>
<p>SOM ${esc(answer.library.som_version)}; source <code>${esc(answer.library.source)}</code> at <code>${esc(answer.library.source_commit)}</code>. <a href="/portal/library">All versions</a></p>
<table><caption>Skills of ${esc(version)}</caption><thead><tr><th scope="col">Skill id</th><th scope="col">Name</th><th scope="col">Category</th><th scope="col">Severity range</th><th scope="col">Fields</th></tr></thead><tbody>
${rows.join('\n') || '<tr><td colspan="5">No skills</td></tr>'}
</tbody></table>`,
    );
  });

  // A skill id is `<group>/<name>`: the rest of the path after /skills/.
  router.get('/portal/library/:version/skills/*skill', (req, res) => {
    const session = requireSession(res);
    const answer = answerOf(String(req.params.version));
    const skillId = ([] as string[]).concat(req.params.skill ?? []).join('/');
    const skill = answer.skills.find((s) => s.skill_id === skillId) ?? notFound(`skill of library ${answer.library.version}`, skillId);
    const fields = skill.fields.map(
      (f) =>
        `<tr><td><code>${esc(f.name)}</code></td><td>${esc(f.kind)}</td><td>${f.required ? 'yes' : 'no'}</td><td>${esc(f.options.join(', '))}</td><td>${esc(f.about)}</td></tr>`,
    );
    const recall = skill.recall_on.map(
      (r) => `<li><code>${esc(r.message_type)}</code> (${r.spec === 'schema' ? 'SOM 1.0 schema' : 'pending a SOM schema'})</li>`,
    );
    sendPage(
      res,
      `Skill ${skill.skill_id}`,
      session,
      `<h1>Skill ${esc(skill.name)} <small><code>${esc(skill.skill_id)}</code></small></h1>
<p>Library <a href="/portal/library/${esc(answer.library.version)}">${esc(answer.library.version)}</a>; category ${esc(skill.category)}; severities ${esc(skill.severity_range.join(' – '))}; authority scale ${skill.authority_scale}.</p>
<h2>Recalled on</h2><ul>${recall.join('') || '<li>nothing</li>'}</ul>
<table><caption>Fields of ${esc(skill.skill_id)}</caption><thead><tr><th scope="col">Name</th><th scope="col">Kind</th><th scope="col">Required</th><th scope="col">Options</th><th scope="col">About</th></tr></thead><tbody>
${fields.join('\n') || '<tr><td colspan="5">No fields</td></tr>'}
</tbody></table>`,
    );
  });
  return router;
}

function notFound(what: string, id: string): never {
  throw new AdminNotFoundError(what, id);
}

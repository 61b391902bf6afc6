import type { Router } from 'express';
import type { LibraryAnswer, LibraryVersion, SkillLibrary, SkillRecord } from '@bus/skills';
import { AdminNotFoundError } from '../errors';
import { Table } from './components';
import { sendPage } from './layout';
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
    sendPage(res, 'Skill library', session, <VersionsPage versions={deps.library.versions} />);
  });

  router.get('/portal/library/:version', (req, res) => {
    const session = requireSession(res);
    const answer = answerOf(String(req.params.version));
    sendPage(res, `Skill library ${answer.library.version}`, session, <VersionPage answer={answer} />);
  });

  // A skill id is `<group>/<name>`: the rest of the path after /skills/.
  router.get('/portal/library/:version/skills/*skill', (req, res) => {
    const session = requireSession(res);
    const answer = answerOf(String(req.params.version));
    const skillId = ([] as string[]).concat(req.params.skill ?? []).join('/');
    const skill = answer.skills.find((s) => s.skill_id === skillId) ?? notFound(`skill of library ${answer.library.version}`, skillId);
    sendPage(res, `Skill ${skill.skill_id}`, session, <SkillPage version={answer.library.version} skill={skill} />);
  });
  return router;
}

function VersionsPage({ versions }: { versions: readonly LibraryVersion[] }) {
  const rows = versions.map(({ info, skills }) => (
    <tr>
      <td>
        <a href={`/portal/library/${info.version}`}>{info.version}</a>
      </td>
      <td>{info.status}</td>
      <td>{info.suite}</td>
      <td>{skills.length}</td>
    </tr>
  ));
  return (
    <>
      <h1>Skill library</h1>
      <p>
        The versions this bus carries (also at <a href="/api/skills/library">/api/skills/library</a>); new instances use the current one.
      </p>
      <Table caption="Library versions, newest first" columns={['Version', 'Status', 'Suite', 'Skills']} rows={rows} empty="No versions" />
    </>
  );
}

function VersionPage({ answer }: { answer: LibraryAnswer }) {
  const { library } = answer;
  const rows = answer.skills.map((s) => (
    <tr>
      <td>
        <a href={`/portal/library/${library.version}/skills/${s.skill_id}`}>
          <code>{s.skill_id}</code>
        </a>
      </td>
      <td>{s.name}</td>
      <td>{s.category}</td>
      <td>{s.severity_range.join(' – ')}</td>
      <td>{s.fields.length}</td>
    </tr>
  ));
  return (
    <>
      <h1>
        Skill library {library.version}{' '}
        <small>
          ({library.status}, {library.suite})
        </small>
      </h1>
      <p>
        SOM {library.som_version}; source <code>{library.source}</code> at <code>{library.source_commit}</code>. <a href="/portal/library">All versions</a>
      </p>
      <Table caption={`Skills of ${library.version}`} columns={['Skill id', 'Name', 'Category', 'Severity range', 'Fields']} rows={rows} empty="No skills" />
    </>
  );
}

function SkillPage({ version, skill }: { version: string; skill: SkillRecord }) {
  const fields = skill.fields.map((f) => (
    <tr>
      <td>
        <code>{f.name}</code>
      </td>
      <td>{f.kind}</td>
      <td>{f.required ? 'yes' : 'no'}</td>
      <td>{f.options.join(', ')}</td>
      <td>{f.about}</td>
    </tr>
  ));
  return (
    <>
      <h1>
        Skill {skill.name}{' '}
        <small>
          <code>{skill.skill_id}</code>
        </small>
      </h1>
      <p>
        Library <a href={`/portal/library/${version}`}>{version}</a>; category {skill.category}; severities {skill.severity_range.join(' – ')}; authority scale{' '}
        {skill.authority_scale}.
      </p>
      <h2>Recalled on</h2>
      <ul>
        {skill.recall_on.length > 0 ? (
          skill.recall_on.map((r) => (
            <li>
              <code>{r.message_type}</code> ({r.spec === 'schema' ? 'SOM 1.0 schema' : 'pending a SOM schema'})
            </li>
          ))
        ) : (
          <li>nothing</li>
        )}
      </ul>
      <Table caption={`Fields of ${skill.skill_id}`} columns={['Name', 'Kind', 'Required', 'Options', 'About']} rows={fields} empty="No fields" />
    </>
  );
}

function notFound(what: string, id: string): never {
  throw new AdminNotFoundError(what, id);
}

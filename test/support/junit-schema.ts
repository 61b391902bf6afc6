import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { validateXML } from 'xmllint-wasm';
import { REPO_ROOT } from '@bus/testing';

let schema: string | undefined;

/**
 * What libxml2 (xmllint-wasm) finds wrong with a JUnit XML report against Jenkins' junit-10.xsd, the
 * schema CI systems read such reports by (deploy/local/junit-xsd.sh fetches it once): [] when valid.
 */
export async function junitSchemaErrors(xml: string): Promise<string[]> {
  schema ??= readFileSync(execFileSync('bash', [path.join(REPO_ROOT, 'deploy', 'local', 'junit-xsd.sh')], { encoding: 'utf8' }).trim(), 'utf8');
  const result = await validateXML({ xml: { fileName: 'report.xml', contents: xml }, schema: { fileName: 'junit-10.xsd', contents: schema } });
  return result.errors.map((error) => error.rawMessage);
}

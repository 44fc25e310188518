// The package as a user installs it: the README's first commands (npm pack,
// then npm install ./shardid-VERSION.tgz into a project), offline, and the
// installed package imports and works; package.json has what npm publish
// and TypeScript need.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, copyFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = join(dirname(fileURLToPath(import.meta.url)), '..');
const pkg = JSON.parse(readFileSync(join(here, 'package.json'), 'utf8'));
const tgz = `shardid-${pkg.version}.tgz`;
const npmEnv = { ...process.env, npm_config_update_notifier: 'false', npm_config_fund: 'false', npm_config_audit: 'false' };

test('package.json is ready to publish', () => {
  assert.equal(pkg.name, 'shardid');
  assert.match(pkg.version, /^\d+\.\d+\.\d+$/);
  assert.equal(pkg.type, 'module');
  assert.deepEqual(pkg.files, ['index.js', 'index.d.ts']);
  assert.deepEqual(pkg.exports['.'], { types: './index.d.ts', default: './index.js' });
  assert.equal(pkg.types, './index.d.ts');
  assert.equal(pkg.engines.node, '>=18');
  assert.equal(pkg.license, 'PostgreSQL');
  assert.equal(pkg.repository.type, 'git');
  assert.equal(pkg.repository.directory, 'clients/js');
  for (const f of [pkg.main, pkg.types, ...Object.values(pkg.exports['.'])]) {
    assert.ok(existsSync(join(here, f)), `${f} exists`);
  }
});

test('the README starts with npm pack and npm install ./shardid-VERSION.tgz', () => {
  const readme = readFileSync(join(here, 'README.md'), 'utf8');
  const first = readme.split('```')[1];
  assert.match(readme.split('```')[0], /Not on the npm registry yet/);
  assert.match(first, /^sh\ncd clients\/js && npm pack {2,}# writes shardid-(\d+\.\d+\.\d+)\.tgz\n/);
  assert.ok(first.includes(`npm install ./${tgz}`), first);
  assert.ok(!first.replace(/shardid-\d+\.\d+\.\d+\.tgz/g, '').match(/\d+\.\d+\.\d+/), 'one version');
  assert.ok(first.includes(`shardid-${pkg.version}.tgz`), `the README names ${tgz}`);
});

// npm is not always there: test/run.sh installs it for its long tier only
let hasNpm = true;
try {
  execFileSync('npm', ['--version'], { env: npmEnv, stdio: 'pipe' });
} catch {
  hasNpm = false;
}

test('npm pack, then npm install ./shardid-VERSION.tgz offline into a project that imports it',
  { skip: hasNpm ? false : 'no npm on this machine' }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'shardid-js-'));
  try {
    execFileSync('npm', ['pack', '--pack-destination', dir], { cwd: here, env: npmEnv, stdio: 'pipe' });
    const app = join(dir, 'myapp');
    execFileSync('mkdir', [app]);
    copyFileSync(join(dir, tgz), join(app, tgz));
    execFileSync('npm', ['install', '--offline', `./${tgz}`], { cwd: app, env: npmEnv, stdio: 'pipe' });
    const appPkg = JSON.parse(readFileSync(join(app, 'package.json'), 'utf8'));
    assert.deepEqual(appPkg.dependencies, { shardid: `file:${tgz}` });
    const out = execFileSync('node', ['--input-type=module', '-e', `
      import { toShortcode, decode } from 'shardid';
      import { createRequire } from 'node:module';
      const require = createRequire(import.meta.url);
      console.log(require.resolve('shardid/package.json'));
      console.log(toShortcode(4185136929178974185n), decode(4185136929178974185n).shard);
    `], { cwd: app, encoding: 'utf8' });
    assert.equal(out, `${join(app, 'node_modules', 'shardid', 'package.json')}\nDoUl90AFPfp 1341\n`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

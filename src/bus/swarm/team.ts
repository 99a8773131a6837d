import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { NotFoundError } from '../../core/errors.js';
import { readJson, teamDir, teamsDir, withLock, writeJsonAtomic } from './files.js';
import { MemberSchema, reasonOf, type Warn } from './schema.js';

/**
 * A Claude Code Agent Team's membership: `~/.claude/teams/<team>/config.json`, `members` each
 * with `agentId` (`<name>@<team>`), `name` and `agentType` (Claude Code's own keys; AMQ's
 * older `agent_id` / `agent_type` are read too). Writes keep every key troupe does not know.
 */

export interface TeamMember {
  name: string;
  agentId: string;
  agentType: string;
}

export interface TeamSummary {
  name: string;
  description: string;
  members: TeamMember[];
  config: string;
}

type Raw = Record<string, unknown>;

const str = (value: unknown): string => (typeof value === 'string' ? value : '');

function member(raw: Raw): TeamMember {
  return {
    name: str(raw.name),
    agentId: str(raw.agentId) || str(raw.agent_id),
    agentType: str(raw.agentType) || str(raw.agent_type),
  };
}

/** The config's members that are members (an object with a name); each other entry is skipped with a warning. */
function members(raw: Raw, config: string, warn: Warn): TeamMember[] {
  if (!Array.isArray(raw.members)) return [];
  const found: TeamMember[] = [];
  raw.members.forEach((entry: unknown, i) => {
    const parsed = MemberSchema.safeParse(entry);
    if (parsed.success) found.push(member(parsed.data));
    else warn(`${config}: members[${i}] skipped (${reasonOf(parsed.error)})`);
  });
  return found;
}

function configPath(team: string): string {
  return join(teamDir(team), 'config.json');
}

function readConfig(team: string): Raw {
  const path = configPath(team);
  if (!existsSync(path))
    throw new NotFoundError(`no team '${team}' (${path})`, { hint: 'see `troupe bus swarm list`' });
  const raw = readJson(path);
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    throw new NotFoundError(`${path} is not a team config (a JSON object)`);
  return raw as Raw;
}

export function loadTeam(team: string, warn: Warn = () => {}): TeamSummary {
  const raw = readConfig(team);
  return {
    name: str(raw.name) || team,
    description: str(raw.description),
    members: members(raw, configPath(team), warn),
    config: configPath(team),
  };
}

/** Every team under ~/.claude/teams (one whose config cannot be read is listed with no members). */
export function listTeams(warn: Warn = () => {}): TeamSummary[] {
  if (!existsSync(teamsDir())) return [];
  return readdirSync(teamsDir(), { withFileTypes: true })
    .filter((e) => e.isDirectory() && !e.name.startsWith('.'))
    .map((e) => {
      try {
        return loadTeam(e.name, warn);
      } catch {
        return { name: e.name, description: '', members: [], config: configPath(e.name) };
      }
    })
    .sort((a, b) => a.name.localeCompare(b.name));
}

/**
 * Adds `handle` to the team as an external member (`agentType: troupe`), as Claude Code lists
 * its teammates; joining again is a no-op. Returns the member and whether it was added.
 */
export function joinTeam(team: string, handle: string, cwd: string): { member: TeamMember; added: boolean } {
  return withLock(`${configPath(team)}.troupe.lock`, () => {
    const raw = readConfig(team);
    const name = str(raw.name) || team;
    const agentId = `${handle}@${name}`;
    const existing = members(raw, configPath(team), () => {}).find(
      (m) => m.agentId === agentId || m.name === handle,
    );
    if (existing) return { member: existing, added: false };
    const added = {
      agentId,
      name: handle,
      agentType: 'troupe',
      joinedAt: Date.now(),
      cwd,
      backendType: 'external',
    };
    // the entries troupe passes over are not its to delete
    const kept: unknown[] = Array.isArray(raw.members) ? raw.members : [];
    writeJsonAtomic(configPath(team), { ...raw, members: [...kept, added] });
    return { member: member(added), added: true };
  });
}

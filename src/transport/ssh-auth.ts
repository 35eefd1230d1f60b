// Which credentials a connection offers, in OpenSSH's order: the agent first, then identity files.
// Passphrase-protected keys are not unlocked here (no prompt in a burn-in run): load them into the agent instead.
import ssh2 from 'ssh2';
const { utils } = ssh2; // ssh2 is CommonJS: named ESM imports fail under plain node
import type { AgentAuthMethod, PublicKeyAuthMethod } from 'ssh2';
import { UsageError } from '../domain/errors.js';
import { readInputBytes } from '../io/read-input.js';

export interface AuthPlan {
  username: string;
  agent: string | null;
  keys: Array<{ path: string; key: Buffer }>;
  // Identity files that exist but could not be used, with why (shown when authentication fails).
  notes: string[];
}

// Build the plan from the agent socket and the identity file list (missing default files are silently skipped).
export function planAuth(opts: { username: string; identityFiles: string[]; agentSock?: string | null; readFile?: (path: string) => Buffer }): AuthPlan {
  // A regular file below 64 KiB (a FIFO named as an identity file is never waited on: io/read-input.ts).
  const read = opts.readFile ?? ((p: string) => readInputBytes(p, 'key', p, 'identity file'));
  const keys: AuthPlan['keys'] = [];
  const notes: string[] = [];
  for (const path of opts.identityFiles) {
    let data: Buffer;
    try {
      data = read(path);
    } catch (e) {
      // A missing file is skipped (the default identity files need not all exist); anything else is said.
      if (e instanceof UsageError && !e.message.endsWith('(ENOENT)')) notes.push(e.message);
      continue;
    }
    const parsed = utils.parseKey(data);
    if (parsed instanceof Error) {
      notes.push(`${path}: ${/encrypted|passphrase/i.test(parsed.message) ? 'passphrase-protected; add it to ssh-agent' : parsed.message}`);
      continue;
    }
    keys.push({ path, key: data });
  }
  return { username: opts.username, agent: opts.agentSock || null, keys, notes };
}

// ssh2 authHandler list: agent, then each key, in order.
export function authMethods(plan: AuthPlan): Array<AgentAuthMethod | PublicKeyAuthMethod> {
  const m: Array<AgentAuthMethod | PublicKeyAuthMethod> = [];
  if (plan.agent) m.push({ type: 'agent' as const, username: plan.username, agent: plan.agent });
  for (const k of plan.keys) m.push({ type: 'publickey' as const, username: plan.username, key: k.key });
  return m;
}

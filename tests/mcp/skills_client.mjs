// The TypeScript SDK's SkillsClient (@modelcontextprotocol/client) against
// `skillpm mcp` over stdio: lists every skill and reads every file of every
// manifest, which SkillsClient checks against the listed size and digest
// (and SKILL.md's frontmatter against the entry's). Prints one JSON report;
// every assertion is in tests/it/mcp.rs.
// Usage: node skills_client.mjs NODE_MODULES_DIR COMMAND ARG... (env: the server's)
import { createRequire } from "node:module";
import path from "node:path";

const [modules, command, ...args] = process.argv.slice(2);
const require = createRequire(path.join(modules, "x.js"));
const { Client } = require("@modelcontextprotocol/client");
const { StdioClientTransport } = require("@modelcontextprotocol/client/stdio");
const { SkillsClient } = require("@modelcontextprotocol/client/ext/skills");

const client = new Client({ name: "skillpm-test", version: "1" });
const transport = new StdioClientTransport({ command, args, env: process.env, stderr: "ignore" });
const report = { supported: false, skills: {}, errors: [] };
try {
  await client.connect(transport);
  const skills = new SkillsClient(client);
  report.supported = skills.supported;
  const listing = await skills.list();
  report.invalid = listing.invalid.length;
  for (const s of listing.skills) {
    const files = {};
    for (const r of Array.isArray(s.resources) ? s.resources : []) {
      try {
        const f = await skills.read(s, r.uri);
        files[f.uri] = { verified: f.verified, size: f.bytes.length };
      } catch (e) {
        report.errors.push(`${r.uri}: ${e}`);
      }
    }
    report.skills[s.uri] = files;
  }
} catch (e) {
  report.errors.push(String(e && e.stack ? e.stack : e));
} finally {
  await client.close().catch(() => {});
}
process.stdout.write(JSON.stringify(report) + "\n");

//! Ranked local search, trigger-driven disclosure and tool policy, driven
//! through the real binary on fixture trees: `search --local`,
//! `prompt --query` tiers 0-3, `<triggers>` in the prompt block, and
//! `status --tools` under strict / warn / ignore.

use crate::common;
use common::{find, stderr, Fixture};
use serde_json::Value;

fn json(s: &str) -> Value {
    serde_json::from_str(s).expect("json")
}

/// A project with one skill of each match kind plus hidden ones.
fn ranked_fixture() -> Fixture {
    let f = Fixture::new();
    f.write(&f.project, "skills.toml", "[skills]\n");
    let r = f.project_root();
    f.skill(&r, "a-invoice", "description: Unrelated helper.", "");
    f.skill(
        &r,
        "b-phrase",
        "description: Other.\ntriggers: [sum the invoice total]",
        "",
    );
    f.skill(
        &r,
        "c-keyword",
        "description: Other.\ntriggers: {keywords: [invoice], verbs: [sum]}",
        "",
    );
    f.skill(
        &r,
        "d-pattern",
        "description: Something else.\ntriggers: {patterns: ['inv\\w+ total', '(unclosed']}",
        "",
    );
    f.skill(
        &r,
        "e-text",
        "description: Handles invoices and the invoice ledger.",
        "Every invoice goes here.\n",
    );
    f.skill(&r, "f-none", "description: Nothing to do with it.", "");
    // Never served: skipped, and user_invocable_only.
    f.skill(
        &r,
        "g-skipped",
        "description: invoice invoice\nrequires: {bins: [no-such-bin-here]}",
        "",
    );
    f.skill(
        &r,
        "h-hidden",
        "description: invoice invoice\nuser_invocable_only: true",
        "",
    );
    f
}

#[test]
fn search_local_ranks_by_kind_then_score_then_command() {
    let f = ranked_fixture();
    let q = "please sum the invoice total for a-invoice";
    let out = f.ok(&["search", "--local", q, "--json"]);
    assert_eq!(
        out,
        f.ok(&["search", "--local", q, "--json"]),
        "deterministic"
    );
    let doc = json(&out);
    assert_eq!(doc["query"], q);
    let hits = doc["hits"].as_array().unwrap();
    let got: Vec<(&str, &str)> = hits
        .iter()
        .map(|h| (h["command"].as_str().unwrap(), h["kind"].as_str().unwrap()))
        .collect();
    assert_eq!(
        got,
        [
            ("a-invoice", "mention"),
            ("b-phrase", "trigger-phrase"),
            ("c-keyword", "keyword"),
            ("d-pattern", "pattern"),
            ("e-text", "text"),
        ]
    );
    let scores: Vec<f64> = hits.iter().map(|h| h["score"].as_f64().unwrap()).collect();
    assert!(scores.windows(2).all(|w| w[0] > w[1]), "{scores:?}");
    assert_eq!(hits[0]["fields"], serde_json::json!(["name", "command"]));
    assert_eq!(hits[2]["fields"], serde_json::json!(["keywords", "verbs"]));
    assert_eq!(
        hits[4]["fields"],
        serde_json::json!(["description", "body"])
    );
    assert_eq!(hits[4]["brief"], "Handles invoices and the invoice ledger.");

    let two = json(&f.ok(&["search", "--local", q, "--json", "--limit", "2"]));
    assert_eq!(two["hits"].as_array().unwrap().len(), 2);
    let none = json(&f.ok(&["search", "--local", "zebra crossing", "--json"]));
    assert_eq!(none["hits"], serde_json::json!([]));

    let human = f.ok(&["search", "--local", q]);
    let first = human.lines().next().unwrap();
    assert!(
        first.contains("mention")
            && first.contains("a-invoice")
            && first.contains("[name, command]"),
        "{human}"
    );
    assert_eq!(human.lines().count(), 5, "{human}");
}

#[test]
fn equal_scores_break_by_command_and_words_match_whole() {
    let f = Fixture::new();
    let r = f.project_root();
    for c in ["zeta", "alpha", "mid"] {
        f.skill(
            &r,
            c,
            "description: Formats tables.\ntriggers: {keywords: [table]}",
            "",
        );
    }
    let doc = json(&f.ok(&["search", "--local", "a table please", "--json"]));
    let cmds: Vec<&str> = doc["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["command"].as_str().unwrap())
        .collect();
    assert_eq!(cmds, ["alpha", "mid", "zeta"]);
    // `table` is not a whole word of "tablecloth" or "timetables".
    let doc = json(&f.ok(&["search", "--local", "tablecloth timetables", "--json"]));
    assert_eq!(doc["hits"], serde_json::json!([]));
}

#[test]
fn search_local_output_is_sanitized_and_registry_flags_stay_apart() {
    let f = Fixture::new();
    f.skill(
        &f.project_root(),
        "evil",
        "description: \"Evil \\e[2J\\u202e skill. More.\"",
        "",
    );
    let human = f.ok(&["search", "--local", "evil"]);
    assert!(
        human.contains("evil") && human.contains("Evil \\x1b[2J\\u{202e} skill."),
        "{human:?}"
    );
    assert!(!human.contains('\u{1b}') && !human.contains('\u{202e}'));
    let j = f.ok(&["search", "--local", "evil", "--json"]);
    assert!(!j.contains('\u{1b}') && !j.contains('\u{202e}'));
    json(&j);
    // --json belongs to --local; registry search keeps its own shape.
    let out = f.skillpm(&["search", "evil", "--json"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
}

fn tier(f: &Fixture, q: &str, extra: &[&str]) -> Value {
    let mut args = vec!["prompt", "--query", q, "--json"];
    args.extend_from_slice(extra);
    json(&f.ok(&args))
}

#[test]
fn prompt_query_discloses_in_four_tiers() {
    let f = Fixture::new();
    f.write(&f.project, "skills.toml", "[skills]\n");
    // Tier 0: no skills at all.
    let t = tier(&f, "fill the form", &[]);
    assert_eq!(
        (t["tier"].as_u64(), t["text"].as_str()),
        (Some(0), Some(""))
    );
    assert_eq!(f.ok(&["prompt", "--query", "fill the form"]), "");

    // Without triggers anywhere, the registry of brief descriptions.
    let r = f.project_root();
    f.skill(
        &r,
        "plain",
        "description: Plain helper. Second sentence.",
        "PLAIN BODY\n",
    );
    let t = tier(&f, "hello there", &[]);
    assert_eq!(t["tier"], 2);
    assert!(t["text"]
        .as_str()
        .unwrap()
        .contains("<description>Plain helper.</description>"));

    f.skill(
        &r,
        "pdf",
        "description: Fill PDF forms. Uses pdftk.\nbrief_description: PDF forms\ntriggers: [fill the form]",
        "PDF BODY\n",
    );
    f.skill(
        &r,
        "git",
        "description: Git helper.\ntriggers: {keywords: [commit], verbs: [rebase]}",
        "GIT BODY\n",
    );
    // Tier 1: triggers exist, none match.
    let t = tier(&f, "what is the weather", &[]);
    assert_eq!(t["tier"], 1);
    assert_eq!(
        f.ok(&["prompt", "--query", "what is the weather"]),
        "[3 skills available]\n"
    );
    // Tier 2: the query asks what is available.
    let text = f.ok(&["prompt", "--query", "What can you do?"]);
    assert!(text.starts_with("<available_skills>\n"), "{text}");
    assert!(
        text.contains("<description>PDF forms</description>"),
        "{text}"
    );
    assert!(text.contains("<keyword>commit</keyword>"), "{text}");
    assert!(!text.contains("BODY"));
    // Tier 3: full instructions of the matches, best first, capped.
    let t = tier(&f, "fill the form, then commit and rebase", &[]);
    assert_eq!(t["tier"], 3);
    assert_eq!(t["commands"], serde_json::json!(["pdf", "git"]));
    let text = t["text"].as_str().unwrap();
    assert!(text.starts_with("<skill_content command=\"pdf\""), "{text}");
    assert!(text.contains("PDF BODY") && text.contains("GIT BODY") && !text.contains("PLAIN"));
    let t = tier(&f, "fill the form, then commit", &["--max-skills", "1"]);
    assert_eq!(t["commands"], serde_json::json!(["pdf"]));
    // --max-skills 0 is refused.
    let out = f.skillpm(&["prompt", "--query", "x", "--max-skills", "0"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn prompt_block_carries_triggers_in_both_formats() {
    let f = Fixture::new();
    f.skill(
        &f.project_root(),
        "pdf",
        "description: PDF\ntriggers: {keywords: [pdf, \"a<b\"], verbs: [fill], patterns: ['\\bform \\d+']}",
        "",
    );
    f.skill(&f.project_root(), "plain", "description: none", "");
    let seed = f.ok(&["prompt"]);
    assert!(
        seed.contains("<triggers>\n<keyword>pdf</keyword>\n<keyword>a&lt;b</keyword>\n<verb>fill</verb>\n<pattern>\\bform \\d+</pattern>\n</triggers>\n</skill>"),
        "{seed}"
    );
    assert_eq!(seed.matches("<triggers>").count(), 1);
    let agent = f.ok(&["prompt", "--format", "agent-skills"]);
    assert!(
        agent.contains("</location>\n<triggers>\n<keyword>pdf</keyword>"),
        "{agent}"
    );
}

#[test]
fn bad_trigger_pattern_is_a_status_warning() {
    let f = ranked_fixture();
    let s = f.status_json();
    let d = find(&s, "d-pattern", "eligible");
    let warnings = d["warnings"].as_array().unwrap();
    assert!(
        warnings
            .iter()
            .any(|w| w.as_str().unwrap().contains("(unclosed")),
        "{warnings:?}"
    );
    let human = f.ok(&["status"]);
    assert!(
        human.contains("warning:") && human.contains("(unclosed"),
        "{human}"
    );
}

fn tools_fixture(config: &str) -> Fixture {
    let f = Fixture::new();
    f.write(&f.project, "skills.toml", format!("[skills]\n{config}"));
    let r = f.project_root();
    f.skill(
        &r,
        "edit",
        "description: Edits.\nallowed-tools: Read Bash(git add:*)",
        "",
    );
    f.skill(
        &r,
        "fetch",
        "description: Fetches.\ntools: [{name: WebFetch, purpose: get docs}, {name: Grep, required: false}]",
        "",
    );
    f.skill(
        &r,
        "lenient",
        "description: Lenient.\nallowed-tools: Bash\ntoolValidation: ignore",
        "",
    );
    f.skill(&r, "none", "description: No tools.", "");
    f
}

fn states(s: &Value) -> Vec<(String, String)> {
    s["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| {
            let reason = x["reason"]["code"].as_str().unwrap_or("");
            (
                x["command"].as_str().unwrap().to_string(),
                format!(
                    "{}{}{reason}",
                    x["state"].as_str().unwrap(),
                    if reason.is_empty() { "" } else { ":" }
                ),
            )
        })
        .collect()
}

#[test]
fn status_tools_strict_skips_missing_tool() {
    let f = tools_fixture("[engine]\ntool_validation = \"strict\"\n");
    let s = json(&f.ok(&["status", "--json", "--tools", "read,grep"]));
    let want = [
        ("edit", "skipped:missing-tool"),
        ("fetch", "skipped:missing-tool"),
        ("lenient", "eligible"),
        ("none", "eligible"),
    ]
    .map(|(a, b)| (a.to_string(), b.to_string()));
    assert_eq!(states(&s), want);
    let edit = find(&s, "edit", "skipped");
    assert!(edit["reason"]["detail"]
        .as_str()
        .unwrap()
        .contains("`Bash`"));
    assert_eq!(
        edit["tools"],
        serde_json::json!([
            {"name": "Bash", "required": true, "available": false},
            {"name": "Read", "required": true, "available": true}
        ])
    );
    let fetch = find(&s, "fetch", "skipped");
    assert_eq!(fetch["tools"][1]["purpose"], "get docs");
    // Without host tools nothing is checked.
    let s = f.status_json();
    assert!(states(&s).iter().all(|(_, st)| st == "eligible"), "{s}");
    assert_eq!(
        find(&s, "edit", "eligible")["tools"][0]["available"],
        Value::Null
    );
    // `[engine] tools` in config stands in for --tools, for every command:
    // skipped skills are neither searched nor prompted.
    f.write(
        &f.project,
        "skills.toml",
        "[engine]\ntool_validation = \"strict\"\ntools = [\"Read\", \"Grep\"]\n",
    );
    assert_eq!(states(&f.status_json()), want);
    assert!(!f.ok(&["prompt"]).contains("Edits."));
    assert!(f.ok(&["prompt"]).contains("No tools."));
    let hits = json(&f.ok(&["search", "--local", "edit edits", "--json"]))["hits"].clone();
    assert_eq!(hits, serde_json::json!([]), "{hits}");
    f.write(
        &f.project,
        "skills.toml",
        "[engine]\ntool_validation = \"strict\"\ntools = [\"Read\", \"Bash\", \"WebFetch\"]\n",
    );
    let s = f.status_json();
    assert!(states(&s).iter().all(|(_, st)| st == "eligible"), "{s}");
}

#[test]
fn status_tools_warn_is_the_default_and_ignore_checks_nothing() {
    let f = tools_fixture("");
    let s = json(&f.ok(&["status", "--json", "--tools", "Read"]));
    assert!(states(&s).iter().all(|(_, st)| st == "eligible"), "{s}");
    let w = find(&s, "edit", "eligible")["warnings"].to_string();
    assert!(w.contains("`Bash`") && !w.contains("`Read`"), "{w}");
    let w = find(&s, "fetch", "eligible")["warnings"].to_string();
    assert!(w.contains("`WebFetch`") && !w.contains("Grep"), "{w}");
    // The skill's own `toolValidation: ignore` wins over the default.
    assert_eq!(
        find(&s, "lenient", "eligible")["warnings"],
        serde_json::json!([])
    );
    let human = f.ok(&["status", "--tools", "Read"]);
    assert!(
        human.contains("needs tool(s) the host does not offer: `Bash`"),
        "{human}"
    );

    let f = tools_fixture("[engine]\ntool_validation = \"ignore\"\n");
    let s = json(&f.ok(&["status", "--json", "--tools", "Read"]));
    assert!(states(&s).iter().all(|(_, st)| st == "eligible"), "{s}");
    assert!(!s.to_string().contains("needs tool"), "{s}");

    // A mode the engine does not know is a config error naming the line.
    let f = tools_fixture("[engine]\ntool_validation = \"sometimes\"\n");
    let out = f.skillpm(&["status"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("skills.toml:3"), "{}", stderr(&out));
}

//! A locked install warns about locked versions the registry has yanked:
//! one `POST /api/v1/yanked` for all of them (see `registry-server`'s
//! `yanked_query_answers_only_what_was_asked_and_follows_yanks` and
//! `install_registry::yanked_versions_are_never_newly_chosen_but_locked_ones_install`),
//! or, from a registry without that endpoint, one index read per package.
//! The warning is best effort and can never be more than was asked.

use crate::common;
use crate::mock;

use common::{stderr, Fixture};
use mock::{good_package, Reply, Req};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// A project locked to `good@1.0.0` and `fine@1.0.0` with an empty cache,
/// served by a registry whose requests `armed` decides once the lock is
/// written; returns the install's stderr.
fn locked_install(armed: impl Fn(&Req) -> Option<Reply> + Send + Sync + 'static) -> String {
    let mut f = Fixture::new();
    let on = Arc::new(AtomicBool::new(false));
    let gate = on.clone();
    let server = mock::registry(
        vec![
            ("good".into(), "1.0.0".into(), good_package("good", "1.0.0")),
            ("fine".into(), "1.0.0".into(), good_package("fine", "1.0.0")),
        ],
        move |req, _| gate.load(Ordering::SeqCst).then(|| armed(req)).flatten(),
    );
    f.extra_env
        .push(("SKILLPM_REGISTRY".into(), server.url.clone()));
    f.ok(&["init"]);
    f.ok(&["add", "good@1", "fine@1"]);
    std::fs::remove_dir_all(f.project_root()).unwrap();
    std::fs::remove_dir_all(&f.cache).unwrap();
    on.store(true, Ordering::SeqCst);
    let out = f.skillpm(&["install", "--locked"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(f.project_root().join("good/SKILL.md").is_file());
    assert!(f.project_root().join("fine/SKILL.md").is_file());
    stderr(&out)
}

fn yanked_index(name: &str) -> Reply {
    let mut doc = mock::index_json(name, &[("1.0.0", &good_package(name, "1.0.0"))]);
    doc["versions"][0]["yanked"] = serde_json::Value::Bool(true);
    mock::json(&doc)
}

#[test]
fn a_registry_without_the_yanked_query_is_asked_per_index() {
    // The mock has no `/api/v1/yanked` (404), so each index is read.
    let err = locked_install(|req| (req.path == "/index/good").then(|| yanked_index("good")));
    assert!(err.contains("good@1.0.0 is yanked"), "{err}");
    assert!(!err.contains("fine@1.0.0 is yanked"), "{err}");
}

#[test]
fn a_yanked_reply_warns_only_about_what_was_asked() {
    let err = locked_install(|req| {
        (req.method == "POST" && req.path == "/api/v1/yanked").then(|| {
            mock::json(&serde_json::json!({"yanked": [
                {"name": "good", "vers": "1.0.0"},
                {"name": "other", "vers": "6.6.6"},
                {"name": "fine", "vers": "9.9.9"},
            ]}))
        })
    });
    assert!(err.contains("good@1.0.0 is yanked"), "{err}");
    assert!(!err.contains("other"), "{err}");
    assert!(!err.contains("fine@9.9.9"), "{err}");
    assert!(!err.contains("fine@1.0.0 is yanked"), "{err}");
}

#[test]
fn a_broken_yanked_reply_costs_the_warning_not_the_install() {
    let err = locked_install(|req| {
        (req.path == "/api/v1/yanked").then(|| mock::json(&serde_json::json!({"yanked": 7})))
    });
    assert!(!err.contains("yanked"), "{err}");
}

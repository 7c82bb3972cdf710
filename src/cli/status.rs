//! `skillpm status`, `status --agent NAME` and `status --agents`: the
//! catalog as skillpm, or one named agent, sees it; or the matrix of every
//! skill against every agent.

use super::output::{print, write_stdout, Exit};
use super::render;
use anyhow::Result;
use skillpm::engine::{agent_view, agents, catalog, config::Environment};
use skillpm::ops;
use std::io::IsTerminal;

pub fn run(env: &Environment, json: bool, agent: Option<&str>, all_agents: bool) -> Result<()> {
    if all_agents {
        let m = agent_view::matrix(env);
        return if json {
            print(&render::json(&m)?)
        } else {
            print(&m.render_human())
        };
    }
    let agent = match agent {
        Some(id) => Some(agents::find(id).ok_or_else(|| {
            Exit(
                2,
                format!("unknown agent `{id}`; known agents: {}", agents::ids()),
            )
        })?),
        None => None,
    };
    let (mut cat, too_deep) = match agent {
        Some(a) => agent_view::catalog(env, a),
        None => (catalog::Catalog::build(env)?, Vec::new()),
    };
    ops::annotate_installed(&mut cat);
    if json {
        let mut doc = cat.to_json();
        if let (Some(a), Some(obj)) = (agent, doc.as_object_mut()) {
            obj.insert("agent".into(), agent_view::describe_json(a, &too_deep));
        }
        return print(&render::json(&doc)?);
    }
    if let Some(a) = agent {
        print(&agent_view::describe(a, &too_deep))?;
    }
    let color = std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none();
    write_stdout(&render::paint(&catalog::render_human(&cat), color))
}

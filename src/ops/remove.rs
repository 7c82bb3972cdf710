//! `skillpm remove NAME...`: from manifest, lock and disk.

use super::sync::Run;
use super::{parse_name, Options, Summary};
use crate::engine::config::Environment;
use crate::error::{Error, Result};
use crate::project::manifest::{Manifest, ManifestEditor};
use crate::project::Project;
use crate::report::Reporter;
use crate::resolve::Refresh;

pub fn remove(
    env: &Environment,
    names: &[String],
    opts: &Options,
    reporter: &dyn Reporter,
) -> Result<Summary> {
    let project = Project::locate(env, opts.global)?;
    let run = Run::new(env, &project, opts, "remove", reporter)?;
    let text = project.manifest_text()?;
    let mut editor = ManifestEditor::parse(&text, &project.manifest_path)?;
    for n in names {
        if !editor.remove_dependency(&parse_name(n)?) {
            return Err(Error::NotInManifest(n.clone()));
        }
    }
    let new_text = editor.to_string();
    let manifest = Manifest::parse(&new_text, &project.manifest_path)?;
    let outcome = run
        .sync_writing(&manifest, &Refresh::Nothing, reporter, |_| Some(new_text))
        .map(|mut summary| {
            // What the user removed is not news as "no longer needed".
            summary.dropped.retain(|d| !names.contains(d));
            summary
        });
    run.finish(outcome)
}

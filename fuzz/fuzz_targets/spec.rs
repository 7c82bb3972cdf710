//! Install specs: anything that parses must contain only allowlisted
//! characters and never start with `-` (argument injection into git).
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(s) = std::str::from_utf8(data) else {
        return;
    };
    if skillpm::project::spec::Spec::parse(s).is_ok() {
        assert!(!s.starts_with('-'), "accepted a leading dash: {s:?}");
        assert!(
            s.chars().all(skillpm::project::spec::is_allowed),
            "accepted a character outside the allowlist: {s:?}"
        );
    }
    let _ = skillpm::project::spec::GitUrl::parse(s);
    let _ = skillpm::project::spec::check_subpath(s);
});

//! The README's examples stay true: its scenario parses and validates.

use gridmarket::scenario::{LoadOptions, Study};

#[test]
fn test_readme_scenario_is_valid() {
    let readme = std::fs::read_to_string("README.md").unwrap();
    let start = readme.find("```toml\n").expect("a toml block") + "```toml\n".len();
    let len = readme[start..].find("```").unwrap();
    let path = std::env::temp_dir().join(format!("gridmarket-readme-{}.toml", std::process::id()));
    std::fs::write(&path, &readme[start..start + len]).unwrap();
    let study = Study::load(&path, &LoadOptions::default());
    let _ = std::fs::remove_file(&path);
    let study = study.unwrap_or_else(|e| panic!("README scenario: {e}"));
    assert_eq!(study.points.len(), 3);
}

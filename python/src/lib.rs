//! `gridmarket._gridmarket`, the compiled half of the Python package `gridmarket` (python/gridmarket/__init__.py
//! builds the package's functions and DataFrames on it): the command line as a function, run on a thread of its own
//! while the interpreter waits, so that Ctrl-C in Python stops the runs early, as it does on the command line.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use gridmarket::scenario::{Plugins, ScenarioError};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// Exit code of a refused scenario, as the command line's (sysexits EX_CONFIG).
const EXIT_CONFIG: u8 = 78;
/// Exit code of any other error.
const EXIT_ERROR: u8 = 2;

/// Runs the command line `args` (without the program's name, as `["run", "file.toml", "--quiet"]`): its exit code,
/// and its error as a dict (`kind` "scenario" with `message`, `file`, `line`, `column`, `key` and `hint`, or "error";
/// `text` the whole message) or None. A signal's exception (KeyboardInterrupt) is raised once the runs have stopped.
#[pyfunction]
fn command<'py>(py: Python<'py>, args: Vec<String>) -> PyResult<(u8, Option<Bound<'py, PyDict>>)> {
    let interrupt = Arc::new(AtomicBool::new(false));
    let flag = interrupt.clone();
    let worker = std::thread::spawn(move || {
        let args = std::iter::once("gridmarket".to_string()).chain(args);
        gridmarket::cli::run_command(args, &Plugins::default(), flag)
    });
    while !worker.is_finished() {
        py.detach(|| std::thread::sleep(Duration::from_millis(20)));
        if let Err(signal) = py.check_signals() {
            // The runs stop at their next event; their outputs so far stay on disk.
            interrupt.store(true, Ordering::Relaxed);
            let _ = py.detach(move || worker.join());
            return Err(signal);
        }
    }
    match worker.join() {
        Ok(Ok(code)) => Ok((code, None)),
        Ok(Err(error)) => {
            let out = PyDict::new(py);
            out.set_item("text", format!("{error:#}"))?;
            let code = match error.downcast_ref::<ScenarioError>() {
                Some(e) => {
                    out.set_item("kind", "scenario")?;
                    out.set_item("message", e.message.as_str())?;
                    out.set_item("file", e.file.to_string_lossy())?;
                    out.set_item("line", e.at.map(|(line, _)| line))?;
                    out.set_item("column", e.at.map(|(_, column)| column))?;
                    out.set_item("key", e.key.as_deref())?;
                    out.set_item("hint", e.hint.as_deref())?;
                    EXIT_CONFIG
                }
                None => {
                    out.set_item("kind", "error")?;
                    EXIT_ERROR
                }
            };
            Ok((code, Some(out)))
        }
        Err(_) => Err(PyRuntimeError::new_err("gridmarket panicked: a bug, to report with the scenario")),
    }
}

/// A scenario given as JSON (a dict from Python) written as TOML, the form scenario files take.
#[pyfunction]
fn scenario_toml(json: &str) -> PyResult<String> {
    let table: toml::Table =
        serde_json::from_str(json).map_err(|e| PyValueError::new_err(format!("not a scenario table: {e}")))?;
    toml::to_string(&table).map_err(|e| PyValueError::new_err(format!("not a scenario table: {e}")))
}

#[pymodule]
fn _gridmarket(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(command, m)?)?;
    m.add_function(wrap_pyfunction!(scenario_toml, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}

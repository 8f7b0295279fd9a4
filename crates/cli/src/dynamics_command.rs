//! `armctl dynamics`: the model's dynamics for given states, as JSON.

use std::io::Read;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use armctl_dynamics::{
    coriolis_matrix, forward_dynamics, forward_dynamics_derivatives, gravity_derivatives,
    gravity_torques, lagrange_coriolis_matrix, lagrange_coupling, lagrange_gravity,
    lagrange_inverse_dynamics, lagrange_mass_matrix, mass_matrix, rnea, rnea_derivatives,
    DynamicsWorkspace, ForwardDerivatives, LagrangeWorkspace, TraceMethod,
};
use armctl_model::{forward_kinematics, KinematicsWorkspace, Robot};
use clap::{Args, ValueEnum};
use nalgebra::{DMatrix, DVector};
use serde::{Deserialize, Serialize};

use crate::model_command::UrdfArgs;

/// `armctl dynamics` arguments.
#[derive(Debug, Args)]
#[command(allow_negative_numbers = true)]
pub(crate) struct DynamicsArgs {
    #[command(flatten)]
    urdf: UrdfArgs,
    /// JSON file `{"samples":[{"q":[..],"qd":[..],"qdd":[..],"tau":[..]}]}` (`tau` optional),
    /// or `-` for standard input.
    #[arg(long)]
    states: PathBuf,
    /// The route to the dynamics: Newton-Euler (RNEA, CRBA, the Christoffel C; the fast one)
    /// or Lagrange-Euler (pseudo-inertias and traces; the reference one).
    #[arg(long, value_enum, default_value = "newton-euler")]
    method: Method,
    /// With `--method lagrange`: how each trace is evaluated.
    #[arg(long, value_enum, default_value = "inner-product")]
    trace: Trace,
    /// With `--method lagrange`: also print the coupling coefficients `D_ijk` (nested
    /// `[i][j][k]`).
    #[arg(long)]
    coupling: bool,
    /// Also print the analytical derivatives (`--method newton-euler`): `dtau_dq`, `dtau_dqd`,
    /// `dG_dq`, and with a `tau` `dqdd_dq`, `dqdd_dqd`, `dqdd_dtau` (entry `[i][j]` =
    /// d out_i / d in_j).
    #[arg(long)]
    derivatives: bool,
}

/// `--method`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Method {
    NewtonEuler,
    Lagrange,
}

/// `--trace`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Trace {
    Direct,
    InnerProduct,
}

#[derive(Debug, Deserialize)]
struct Input {
    samples: Vec<InputSample>,
}

#[derive(Debug, Deserialize)]
struct InputSample {
    q: Vec<f64>,
    qd: Vec<f64>,
    qdd: Vec<f64>,
    tau: Option<Vec<f64>>,
}

#[derive(Debug, Serialize)]
struct Output {
    joint_names: Vec<String>,
    samples: Vec<OutputSample>,
}

#[allow(non_snake_case)]
#[derive(Debug, Serialize)]
struct OutputSample {
    tau: Vec<f64>,
    M: Vec<Vec<f64>>,
    C: Vec<Vec<f64>>,
    G: Vec<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    qdd: Option<Vec<f64>>,
    T_tip: Vec<Vec<f64>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    D_ijk: Option<Vec<Vec<Vec<f64>>>>,
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    derivatives: Option<Derivatives>,
}

/// The derivatives of a sample (`--derivatives`), named as in the reference data.
#[allow(non_snake_case)]
#[derive(Debug, Serialize)]
struct Derivatives {
    dtau_dq: Vec<Vec<f64>>,
    dtau_dqd: Vec<Vec<f64>>,
    dG_dq: Vec<Vec<f64>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    dqdd_dq: Option<Vec<Vec<f64>>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    dqdd_dqd: Option<Vec<Vec<f64>>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    dqdd_dtau: Option<Vec<Vec<f64>>>,
}

/// tau, M, C, G and (with a tau) the forward dynamics by one route.
struct Terms {
    tau: Vec<f64>,
    m: DMatrix<f64>,
    c: DMatrix<f64>,
    g: Vec<f64>,
    qdd: Option<Vec<f64>>,
}

fn rows(m: &DMatrix<f64>) -> Vec<Vec<f64>> {
    m.row_iter().map(|r| r.iter().copied().collect()).collect()
}

fn read_states(path: &Path) -> Result<Input> {
    let text = if path.as_os_str() == "-" {
        let mut text = String::new();
        std::io::stdin()
            .take(armctl_model::files::MAX_LOG_BYTES)
            .read_to_string(&mut text)
            .context("reading states from standard input")?;
        text
    } else {
        crate::input_file::read_text(path, "states", armctl_model::files::MAX_LOG_BYTES)?
    };
    serde_json::from_str(&text).with_context(|| format!("parsing states from {}", path.display()))
}

pub(crate) fn run(args: &DynamicsArgs) -> Result<()> {
    if args.method == Method::NewtonEuler && (args.coupling || args.trace != Trace::InnerProduct) {
        bail!("--coupling and --trace are for --method lagrange");
    }
    if args.method == Method::Lagrange && args.derivatives {
        bail!("--derivatives are analytical derivatives of the Newton-Euler recursion: use --method newton-euler");
    }
    let robot = args.urdf.load_robot()?;
    let input = read_states(&args.states)?;
    let samples = input
        .samples
        .iter()
        .enumerate()
        .map(|(k, s)| evaluate(&robot, s, args).with_context(|| format!("sample {k}")))
        .collect::<Result<Vec<_>>>()?;
    let output = Output {
        joint_names: robot.joint_names().map(str::to_string).collect(),
        samples,
    };
    println!("{}", serde_json::to_string(&output)?);
    Ok(())
}

fn evaluate(robot: &Robot, s: &InputSample, args: &DynamicsArgs) -> Result<OutputSample> {
    let n = robot.dof();
    for (name, v) in [("q", &s.q), ("qd", &s.qd), ("qdd", &s.qdd)]
        .into_iter()
        .chain(s.tau.as_ref().map(|t| ("tau", t)))
    {
        if v.len() != n {
            bail!("'{name}' has {} values, the robot has {n} joints", v.len());
        }
        if v.iter().any(|x| !x.is_finite()) {
            bail!("'{name}' holds a non-finite value");
        }
    }
    let Terms { tau, m, c, g, qdd } = match args.method {
        Method::NewtonEuler => newton_euler(robot, s)?,
        Method::Lagrange => lagrange(robot, s, trace_method(args.trace))?,
    };
    let coupling = if args.coupling {
        Some(coupling(robot, s, trace_method(args.trace))?)
    } else {
        None
    };
    let derivatives = match args.derivatives {
        true => Some(derivatives(robot, s)?),
        false => None,
    };
    let tip = forward_kinematics(robot, &mut KinematicsWorkspace::new(robot), &s.q)?.tip();
    // Finite inputs can still overflow (q = 1e308): JSON would print null and exit 0.
    let results = [
        ("tau", tau.as_slice()),
        ("M", m.as_slice()),
        ("C", c.as_slice()),
        ("G", g.as_slice()),
        ("qdd", qdd.as_deref().unwrap_or(&[])),
    ];
    if let Some((name, _)) = results
        .iter()
        .find(|(_, v)| v.iter().any(|x| !x.is_finite()))
    {
        bail!("'{name}' is not finite for these inputs (are q, qd, qdd of a sensible size?)");
    }
    Ok(OutputSample {
        tau,
        M: rows(&m),
        C: rows(&c),
        G: g,
        qdd,
        D_ijk: coupling,
        derivatives,
        T_tip: rows(&DMatrix::from_iterator(
            4,
            4,
            tip.to_homogeneous().iter().copied(),
        )),
    })
}

/// The analytical derivatives at the sample; a matrix that is not finite is refused by name.
fn derivatives(robot: &Robot, s: &InputSample) -> Result<Derivatives> {
    let n = robot.dof();
    let mut ws = DynamicsWorkspace::new(robot);
    let m = || DMatrix::<f64>::zeros(n, n);
    let (mut dq, mut dqd, mut dg) = (m(), m(), m());
    rnea_derivatives(robot, &mut ws, (&s.q, &s.qd, &s.qdd), &mut dq, &mut dqd)?;
    gravity_derivatives(robot, &mut ws, &s.q, &mut dg)?;
    let mut forward = None;
    if let Some(tau) = &s.tau {
        let (mut fq, mut fqd, mut ftau, mut qdd) = (m(), m(), m(), vec![0.0; n]);
        let out = ForwardDerivatives {
            qdd: &mut qdd,
            dqdd_dq: &mut fq,
            dqdd_dqd: &mut fqd,
            dqdd_dtau: &mut ftau,
        };
        forward_dynamics_derivatives(robot, &mut ws, (&s.q, &s.qd, tau), out)?;
        forward = Some((fq, fqd, ftau));
    }
    let mut all = vec![("dtau_dq", &dq), ("dtau_dqd", &dqd), ("dG_dq", &dg)];
    if let Some((fq, fqd, ftau)) = &forward {
        all.extend([("dqdd_dq", fq), ("dqdd_dqd", fqd), ("dqdd_dtau", ftau)]);
    }
    if let Some((name, _)) = all.iter().find(|(_, m)| m.iter().any(|x| !x.is_finite())) {
        bail!("'{name}' is not finite for these inputs");
    }
    Ok(Derivatives {
        dtau_dq: rows(&dq),
        dtau_dqd: rows(&dqd),
        dG_dq: rows(&dg),
        dqdd_dq: forward.as_ref().map(|f| rows(&f.0)),
        dqdd_dqd: forward.as_ref().map(|f| rows(&f.1)),
        dqdd_dtau: forward.as_ref().map(|f| rows(&f.2)),
    })
}

fn trace_method(trace: Trace) -> TraceMethod {
    match trace {
        Trace::Direct => TraceMethod::Direct,
        Trace::InnerProduct => TraceMethod::InnerProduct,
    }
}

fn newton_euler(robot: &Robot, s: &InputSample) -> Result<Terms> {
    let n = robot.dof();
    let mut ws = DynamicsWorkspace::new(robot);
    let (mut tau, mut g) = (vec![0.0; n], vec![0.0; n]);
    let (mut m, mut c) = (DMatrix::zeros(n, n), DMatrix::zeros(n, n));
    rnea(robot, &mut ws, &s.q, &s.qd, &s.qdd, &mut tau)?;
    mass_matrix(robot, &mut ws, &s.q, &mut m)?;
    coriolis_matrix(robot, &mut ws, &s.q, &s.qd, &mut c)?;
    gravity_torques(robot, &mut ws, &s.q, &mut g)?;
    let qdd = match &s.tau {
        Some(t) => {
            let mut qdd = vec![0.0; n];
            forward_dynamics(robot, &mut ws, &s.q, &s.qd, t, &mut qdd)?;
            Some(qdd)
        }
        None => None,
    };
    Ok(Terms { tau, m, c, g, qdd })
}

/// The same terms by Lagrange-Euler; the forward dynamics solves `M qdd = tau - C qd - G`.
fn lagrange(robot: &Robot, s: &InputSample, method: TraceMethod) -> Result<Terms> {
    let n = robot.dof();
    let mut ws = LagrangeWorkspace::new(robot);
    let (mut tau, mut g) = (vec![0.0; n], vec![0.0; n]);
    let (mut m, mut c) = (DMatrix::zeros(n, n), DMatrix::zeros(n, n));
    let state = (s.q.as_slice(), s.qd.as_slice(), s.qdd.as_slice());
    lagrange_inverse_dynamics(robot, &mut ws, state, method, &mut tau)?;
    lagrange_mass_matrix(robot, &mut ws, &s.q, method, &mut m)?;
    lagrange_coriolis_matrix(robot, &mut ws, &s.q, &s.qd, method, &mut c)?;
    lagrange_gravity(robot, &mut ws, &s.q, method, &mut g)?;
    let qdd = match &s.tau {
        Some(t) => {
            let rhs = DVector::from_column_slice(t)
                - &c * DVector::from_column_slice(&s.qd)
                - DVector::from_column_slice(&g);
            let solved = m
                .clone()
                .cholesky()
                .context("the mass matrix is not positive definite")?
                .solve(&rhs);
            Some(solved.iter().copied().collect())
        }
        None => None,
    };
    Ok(Terms { tau, m, c, g, qdd })
}

/// `D_ijk` as `[i][j][k]`.
fn coupling(robot: &Robot, s: &InputSample, method: TraceMethod) -> Result<Vec<Vec<Vec<f64>>>> {
    let n = robot.dof();
    let mut d = vec![0.0; n * n * n];
    lagrange_coupling(
        robot,
        &mut LagrangeWorkspace::new(robot),
        &s.q,
        method,
        &mut d,
    )?;
    if d.iter().any(|x| !x.is_finite()) {
        bail!("'D_ijk' is not finite for these inputs");
    }
    Ok(d.chunks(n * n)
        .map(|plane| plane.chunks(n).map(<[f64]>::to_vec).collect())
        .collect())
}

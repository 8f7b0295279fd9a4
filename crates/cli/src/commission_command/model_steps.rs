//! Steps 2 to 7 on the arm and the model: excite and record under the URDF's model, identify
//! (physically consistent, with friction), validate on a held-out trajectory, size the gains
//! for the identified model and predict their tracking on it, verify them on the arm.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use armctl_control::ParameterValue as RosValue;
use armctl_ident::{identify, validate, Identification, IdentifyOptions, JointLog, Validation};
use armctl_model::Robot;
use armctl_nodes::msgs::{Header, JointState, Time};
use armctl_sim::SimConfig;

use super::arm::{Arm, ArmState, SimulatedArm};
use super::drive::{drive, hold_while, Recording};
use super::estimator::{Estimator, EstimatorUsed};
use super::plan::Plan;
use super::{completed, controller, Gate, Settings};

/// The law the commissioning tunes and deploys.
pub(crate) const LAW: &str = "computed_torque";

/// The law that holds and excites the arm on the URDF's model: PD with gravity compensation,
/// stable whatever the inertias are (only G comes from the model), where computed torque on
/// a wrong mass matrix is not.
pub(crate) const EXCITATION_LAW: &str = "pd_gravity";

/// What the steps share.
pub(crate) struct Steps<'a> {
    pub(crate) robot: &'a Robot,
    pub(crate) settings: &'a Settings,
    pub(crate) out: &'a Path,
    pub(crate) urdf: &'a Path,
}

/// What the steps found.
pub(crate) struct Outcome {
    pub(crate) excitation: Recording,
    pub(crate) identification: Identification,
    /// Which estimate the identification is.
    pub(crate) estimator: EstimatorUsed,
    pub(crate) nominal: Recording,
    pub(crate) validation: Validation,
    /// The parameter file written and verified (not yet deployed).
    pub(crate) candidate: PathBuf,
    pub(crate) kp: Vec<f64>,
    pub(crate) kd: Vec<f64>,
    /// The validation trajectory under the tuned controller on the identified model.
    pub(crate) predicted: Recording,
    /// The same on the arm.
    pub(crate) verified: Recording,
    pub(crate) files: Vec<PathBuf>,
}

impl Steps<'_> {
    /// Runs steps 2 to 7.
    pub(crate) fn run(&self, arm: &mut dyn Arm, plan: &Plan) -> Result<Outcome> {
        let mut files = vec![];
        println!(
            "2. excite: {} s under {EXCITATION_LAW} with the URDF's model",
            self.settings.duration
        );
        let excitation = self.on_arm(
            arm,
            plan,
            &plan.excitation.trajectory,
            self.settings.duration,
            "excite",
            &mut files,
        )?;
        println!(
            "3. record: {} samples -> {}",
            excitation.log.len(),
            files
                .iter()
                .map(|f| f.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        );
        println!("4. identify: base parameters, friction, every link a body that exists");
        let holder = || self.settings.excitation_controller(self.robot, plan);
        let period = arm.period();
        let (identification, estimator) =
            hold_while(arm, holder, || self.identify(&excitation, plan, period))??;
        println!(
            "5. validate: {} s held out, never seen by the fit",
            self.settings.validation_duration
        );
        let nominal = self.on_arm(
            arm,
            plan,
            &plan.validation.trajectory,
            self.settings.validation_duration,
            "validate",
            &mut files,
        )?;
        let holder = || self.settings.excitation_controller(self.robot, plan);
        let (model, validation) = hold_while(arm, holder, || {
            let model = identification.model().apply(self.robot).map_err(|e| {
                Gate::at(
                    "identify",
                    format!("the identified model does not apply to the URDF: {e}"),
                )
            })?;
            let validation = self.validate(&model, &nominal.log)?;
            anyhow::Ok((model, validation))
        })??;
        println!("6. size the gains for the identified model");
        let candidate = self.out.join("commissioned.candidate.yaml");
        let tuned = self.tune_and_verify(arm, &model, &identification, &candidate, plan, &nominal);
        let (kp, kd, predicted, verified) = tuned.inspect_err(|_| reject(&candidate))?;
        Ok(Outcome {
            excitation,
            identification,
            estimator,
            nominal,
            validation,
            candidate,
            kp,
            kd,
            predicted,
            verified,
            files,
        })
    }

    /// Steps 6 and 7: the parameter file at `candidate` with gains sized for `model`, the
    /// tracking they are predicted to give on it, and the tracking verified on the arm.
    fn tune_and_verify(
        &self,
        arm: &mut dyn Arm,
        model: &Robot,
        identification: &Identification,
        candidate: &Path,
        plan: &Plan,
        nominal: &Recording,
    ) -> Result<(Vec<f64>, Vec<f64>, Recording, Recording)> {
        let holder = || self.settings.excitation_controller(self.robot, plan);
        let (start, arm_period) = (arm_position(arm, model)?, arm.period());
        let (kp, kd, predicted) = hold_while(arm, holder, || {
            let (kp, kd) = self.write_parameters(identification, candidate)?;
            let predicted = self.predict(&start, arm_period, model, candidate, plan)?;
            anyhow::Ok((kp, kd, predicted))
        })??;
        println!("7. verify on the arm: the held-out trajectory under the new parameter file");
        let mut verify_runtime = controller(self.robot, vec![], Some(candidate))?;
        let follow = Box::new(plan.validation.trajectory.clone());
        let verified = drive(
            arm,
            &mut verify_runtime,
            Some(follow),
            self.settings.validation_duration,
            self.settings.verify_guard(),
            "verifying",
        )?;
        let holder = || self.settings.excitation_controller(self.robot, plan);
        let mut kept = hold_while(arm, holder, || {
            write_recording(self.out, "verify", &verified.log)
        })??;
        kept.push(rejected(candidate));
        let verified = completed("verify", verified, &kept, "the arm")?;
        print_tracking(&verified);
        no_worse(&verified, nominal, &kept)?;
        Ok((kp, kd, predicted, verified))
    }

    /// A run on the arm under the URDF's model with the protections on, recorded to
    /// `<step>.csv` and `<step>.mcap` whether or not it completes.
    fn on_arm(
        &self,
        arm: &mut dyn Arm,
        plan: &Plan,
        trajectory: &armctl_control::reference::Fourier,
        seconds: f64,
        step: &'static str,
        files: &mut Vec<PathBuf>,
    ) -> Result<Recording> {
        let mut runtime = self.settings.excitation_controller(self.robot, plan)?;
        let follow = Box::new(trajectory.clone());
        let recording = drive(
            arm,
            &mut runtime,
            Some(follow),
            seconds,
            self.settings.guard(),
            step,
        )?;
        let holder = || self.settings.excitation_controller(self.robot, plan);
        let written = hold_while(arm, holder, || {
            write_recording(self.out, step, &recording.log)
        })??;
        files.extend(written.iter().cloned());
        let recording = completed(step, recording, &written, "the arm")?;
        print_tracking(&recording);
        Ok(recording)
    }

    /// Step 4 on the excitation's `recording` (an arm stepped every `period` s): weighted
    /// least squares, then the estimator the settings ask for.
    fn identify(
        &self,
        recording: &Recording,
        plan: &Plan,
        period: f64,
    ) -> Result<(Identification, EstimatorUsed)> {
        let options = IdentifyOptions {
            friction: true,
            friction_offset: true,
            ..IdentifyOptions::default()
        };
        let found = identify(self.robot, &recording.log, &options).map_err(|e| {
            Gate::at(
                "identify",
                format!(
                    "{e}; nothing deployed; the arm braked to rest at the end of the excitation"
                ),
            )
        })?;
        let (found, used) = match self.settings.estimator {
            Estimator::IdimIv => self.instrumental(found, recording, plan, (&options, period)),
            Estimator::Wls => {
                let name = "weighted least squares".to_string();
                (found, EstimatorUsed { name, change: None })
            }
        };
        println!(
            "   ok: condition number {:.1}, every link a body (largest distance from least squares {:.2} sigma, {}), held-out part of the excitation {:.2} %",
            found.condition_number,
            found.consistency_gap.largest_sigmas,
            found.consistency_gap.largest_parameter,
            100.0 * found.holdout_overall
        );
        println!("   estimator: {}", used.describe());
        for note in friction_notes(&found) {
            println!("   {note}");
        }
        Ok((found, used))
    }

    /// The identified model's effort prediction on the validation run, per joint within the
    /// threshold of its effort range.
    fn validate(&self, model: &Robot, log: &JointLog) -> Result<Validation> {
        let options = IdentifyOptions::default();
        let found = validate(model, log, options.cutoff, options.min_speed)
            .map_err(|e| Gate::at("validate", e.to_string()))?;
        let (worst, share) = found.worst();
        let name = &log.joint_names[worst];
        if share.is_nan() || share > self.settings.max_error {
            return Err(Gate::at(
                "validate",
                format!(
                    "the identified model predicts joint '{name}' with an RMS error of {:.3} ({:.2} % of its effort range {:.2}), above {:.2} %: not deployed; the arm braked to rest at the end of the validation run",
                    found.rms[worst],
                    100.0 * share,
                    found.range[worst],
                    100.0 * self.settings.max_error
                ),
            )
            .into());
        }
        println!("   ok: effort prediction error at most {:.2} % of a joint's effort range ({name}), within {:.2} %", 100.0 * share, 100.0 * self.settings.max_error);
        Ok(found)
    }

    /// The parameter file: the identified model, the law and its gains as sized for that
    /// model (the defaults' sampled-data bound, docs/theory.md section 6).
    fn write_parameters(
        &self,
        found: &Identification,
        path: &Path,
    ) -> Result<(Vec<f64>, Vec<f64>)> {
        let comment = format!(
            "Commissioned by armctl commission for {}: the identified model (physically consistent, with friction), {LAW} with gains sized for it",
            self.urdf.display()
        );
        let mut text = found.model().to_ros_parameters(&comment);
        text += &format!("    controller: {LAW}\n");
        std::fs::write(path, &text).with_context(|| format!("writing {}", path.display()))?;
        let sized = controller(self.robot, vec![], Some(path))?;
        let gains = |name: &str| match sized.parameter(name) {
            Some(RosValue::DoubleArray(v)) => Ok(v.to_vec()),
            other => Err(anyhow::anyhow!("{LAW} has no {name} gains ({other:?})")),
        };
        let (kp, kd) = (gains("kp")?, gains("kd")?);
        text += &format!("    kp: {}\n    kd: {}\n", list(&kp), list(&kd));
        std::fs::write(path, &text).with_context(|| format!("writing {}", path.display()))?;
        println!("   kp {}\n   kd {}", list(&kp), list(&kd));
        Ok((kp, kd))
    }

    /// The validation trajectory under the new parameters on the identified model, in the
    /// simulator, from where the arm is.
    fn predict(
        &self,
        q0: &[f64],
        dt: f64,
        model: &Robot,
        file: &Path,
        plan: &Plan,
    ) -> Result<Recording> {
        let config = SimConfig {
            dt,
            friction: true,
            ..SimConfig::default()
        };
        let mut simulated = SimulatedArm::new(model, q0, config, "the identified model".into())?;
        let mut runtime = controller(model, vec![], Some(file))?;
        let follow = Box::new(plan.validation.trajectory.clone());
        let seconds = self.settings.validation_duration;
        let predicted = drive(
            &mut simulated,
            &mut runtime,
            Some(follow),
            seconds,
            self.settings.verify_guard(),
            "predicting",
        )?;
        let rms = predicted.tracking_rms();
        println!(
            "   predicted tracking on the held-out trajectory: RMS {} (rad or m)",
            list_short(&rms)
        );
        completed(
            "size the gains",
            predicted,
            &[],
            "the simulated identified model",
        )
    }
}

/// Where the arm is, in the URDF's joint order.
fn arm_position(arm: &mut dyn Arm, model: &Robot) -> Result<Vec<f64>> {
    let mut state = ArmState::default();
    arm.measure(&mut state)?;
    let names: Vec<String> = model.joint_names().map(str::to_string).collect();
    let order = super::drive::arm_order(&names, arm)?;
    Ok(order.iter().map(|&a| state.position[a]).collect())
}

/// Refuses a commissioned controller that tracks the held-out trajectory worse on some joint
/// than the URDF's model did, when both ran it at full speed (a slowed run is not compared).
fn no_worse(verified: &Recording, nominal: &Recording, kept: &[PathBuf]) -> Result<()> {
    if nominal.was_slowed() {
        println!("   (the URDF's model ran the held-out trajectory slowed down: its tracking is not compared)");
        return Ok(());
    }
    let (after, before) = (verified.tracking_rms(), nominal.tracking_rms());
    let worse = (0..after.len()).find(|&j| after[j].is_nan() || after[j] > before[j]);
    if let Some(j) = worse {
        let kept: Vec<String> = kept.iter().map(|p| p.display().to_string()).collect();
        return Err(Gate::at(
            "verify",
            format!(
                "the commissioned controller tracks joint '{}' worse than the URDF's model (RMS {:.3e} against {:.3e}): not deployed; the arm braked to rest; kept: {}",
                verified.log.joint_names[j], after[j], before[j], kept.join(", ")
            ),
        )
        .into());
    }
    Ok(())
}

/// The run's largest tracking error, named by joint.
fn print_tracking(recording: &Recording) {
    if let Some((rate, t)) = recording.slowest {
        println!(
            "   slowed down as tracking worsened: at most to {:.0} % speed (t = {t:.3} s)",
            100.0 * rate
        );
    }
    let (j, error) = recording.largest_error();
    println!(
        "   ok: completed; largest tracking error {error:.4} ({}), RMS {}",
        recording.log.joint_names[j],
        list_short(&recording.tracking_rms())
    );
}

/// Where a parameter file that failed a later step is moved.
fn rejected(candidate: &Path) -> PathBuf {
    candidate.with_extension("rejected.yaml")
}

/// A step that failed after the parameter file was written leaves no file that looks
/// deployable.
pub(crate) fn reject(candidate: &Path) {
    let _ = std::fs::rename(candidate, rejected(candidate));
}

pub(crate) fn list(v: &[f64]) -> String {
    let items: Vec<String> = v.iter().map(|x| format!("{x:?}")).collect();
    format!("[{}]", items.join(", "))
}

pub(crate) fn list_short(v: &[f64]) -> String {
    let items: Vec<String> = v.iter().map(|x| format!("{x:.2e}")).collect();
    format!("[{}]", items.join(", "))
}

/// `<step>.csv` (what `armctl identify --log` reads) and `<step>.mcap` (a rosbag2 recording of
/// sensor_msgs/JointState on /joint_states), in `dir`.
fn write_recording(dir: &Path, step: &str, log: &JointLog) -> Result<Vec<PathBuf>> {
    let csv = dir.join(format!("{step}.csv"));
    log.write_csv(&csv)
        .with_context(|| format!("writing {}", csv.display()))?;
    let mcap = dir.join(format!("{step}.mcap"));
    let states: Vec<JointState> = (0..log.len()).map(|k| joint_state(log, k)).collect();
    armctl_nodes::bag::write_joint_states(&mcap, "/joint_states", &states)
        .with_context(|| format!("writing {}", mcap.display()))?;
    Ok(vec![csv, mcap])
}

fn joint_state(log: &JointLog, k: usize) -> JointState {
    let ns = (log.time[k] * 1e9).round() as u64;
    JointState {
        header: Header {
            stamp: Time {
                sec: (ns / 1_000_000_000) as i32,
                nanosec: (ns % 1_000_000_000) as u32,
            },
            frame_id: String::new(),
        },
        name: log.joint_names.clone(),
        position: log.position[k].clone(),
        velocity: log.velocity.as_ref().map_or(vec![], |v| v[k].clone()),
        effort: log.effort[k].clone(),
    }
}

/// What step 4 found of the friction beyond its levels: each joint's offset with its standard
/// deviation, and what was written otherwise than fitted (a coefficient at zero, an offset or
/// harmonics cut to the Coulomb level), naming the joints.
pub(super) fn friction_notes(found: &Identification) -> Vec<String> {
    let mut notes = vec![];
    let n = found.friction_offset.len();
    if n > 0 && found.friction_std.len() >= n {
        let std = &found.friction_std[found.friction_std.len() - n..];
        let each: Vec<String> = found
            .friction_offset
            .iter()
            .zip(std)
            .map(|(v, s)| format!("{v:+.4} ({s:.1e})"))
            .collect();
        notes.push(format!(
            "friction offset per joint, N m (standard deviation): {}",
            each.join(", ")
        ));
    }
    notes.extend(found.friction_at_zero.iter().map(ToString::to_string));
    if !found.offset_limited.is_empty() {
        notes.push(format!(
            "friction offset cut to the Coulomb level for {} (friction may drive a joint neither way)",
            found.offset_limited.join(", ")
        ));
    }
    if !found.ripple_limited.is_empty() {
        notes.push(format!(
            "Coulomb harmonics scaled down to the Coulomb level for {}",
            found.ripple_limited.join(", ")
        ));
    }
    notes
}

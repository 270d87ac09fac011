import type {DB} from '../store/db.js'
import type {ArmCounts, Experiment, ExposureChange, Status} from '../store/port/experiments.js'
import type {SqliteExperiments} from '../store/sqlite/experiments.js'
import {storeOfHandle} from '../store/sqlite/store.js'

/**
 * The experiments records (types of the experiments part of the storage port,
 * src/store/port/experiments.ts), and transitional wrappers with the old signatures
 * (a SQLite handle) for src/pricing, until it holds a StorePort: each goes through the
 * experiments repository of the handle's store (statements prepared once). New code calls
 * `store.experiments` instead.
 */
export type {
  Allocation,
  Arm,
  ArmCounts,
  Experiment,
  ExperimentDef,
  ExperimentProduct,
  ExperimentType,
  Status,
} from '../store/port/experiments.js'

function adapter(db: DB): SqliteExperiments {
  return storeOfHandle(db).experiments
}

/** Transitional (src/pricing): `store.experiments.get([id])[0]`. */
export function getExperiment(db: DB, id: number): Experiment | undefined {
  return adapter(db).get([id])[0]
}

/** Transitional (src/pricing): `store.experiments.list(status)`. */
export function listExperiments(db: DB, status?: Status): Experiment[] {
  return adapter(db).list(status)
}

/** Transitional (src/pricing): `store.experiments.recordExposures([...])`. */
export function recordExposure(db: DB, experimentId: number, visitor: string, anonymous: boolean, armId: string, at: number): ExposureChange {
  return adapter(db).recordExposure({anonymous, armId, at, experimentId, visitor})
}

/** Transitional (src/pricing): `store.experiments.adoptExposures([...])`. */
export function adoptExposure(db: DB, experimentId: number, ip: string, userId: string): void {
  adapter(db).adoptExposures([{experimentId, ip, userId}])
}

/** Transitional (src/pricing): `store.experiments.armCounts(id)`. */
export function armCounts(db: DB, experimentId: number): Map<string, ArmCounts> {
  return adapter(db).armCounts(experimentId)
}

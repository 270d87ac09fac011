/**
 * The experiments records (types of the experiments part of the storage port,
 * src/store/port/experiments.ts). Reads and writes go through `store.experiments`.
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

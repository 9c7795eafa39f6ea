/** A plain-JSON description of the machine, for results files. */
import { arch, cpus, platform, release, totalmem } from 'node:os';

export interface MachineDescription {
  readonly os: string;
  readonly arch: string;
  readonly cpu: string;
  readonly cores: number;
  readonly memoryBytes: number;
  readonly node: string;
  readonly hostname?: string;
}

export function describeMachine(): MachineDescription {
  const list = cpus();
  return {
    os: `${platform()} ${release()}`,
    arch: arch(),
    cpu: list[0]?.model?.trim() || 'unknown',
    cores: list.length,
    memoryBytes: totalmem(),
    node: process.version,
  };
}

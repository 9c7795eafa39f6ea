/**
 * The formulation each algorithm chooses on a device, for the report's capability
 * matrix and `trident devices`: each line is the algorithm's own answer
 * (`<algorithm>Formulation(device)` in @trident/algorithms, which its entry point
 * runs), so the CLI keeps no rule of its own. An algorithm that refuses the device
 * says 'refused: <why>'.
 */
import {
  bfsFormulation,
  compactFormulation,
  componentsFormulation,
  type Formulation,
  histogramFormulation,
  nbodyFormulation,
  reduceFormulation,
  scanFormulation,
  sortFormulation,
  zcopyFormulation,
} from '@trident/algorithms';
import type { Device } from 'trident';

/** The summary of what `choose` returns, or 'refused: <first line of its error>'. */
function describe(choose: () => Formulation<string, unknown>): string {
  try {
    return choose().summary;
  } catch (err) {
    return `refused: ${err instanceof Error ? (err.message.split('\n')[0] ?? '') : String(err)}`;
  }
}

/** Algorithm -> the formulation it runs on `device` with default options ('refused: …' where none fits). */
export function chosenFormulations(device: Device): Record<string, string> {
  return {
    zcopy: describe(() => zcopyFormulation(device)),
    reduce: describe(() => reduceFormulation(device)),
    scan: describe(() => scanFormulation(device)),
    histogram: describe(() => histogramFormulation(device, { bins: 256 })),
    compact: describe(() => compactFormulation(device)),
    sort: describe(() => sortFormulation(device)),
    nbody: describe(() => nbodyFormulation(device)),
    bfs: describe(() => bfsFormulation(device)),
    components: describe(() => componentsFormulation(device)),
  };
}

/**
 * The generated arcs (`scale.ts`) as part of the one storage ring: arc n's
 * ten cells follow the catalogue's twenty and the arcs before it, with the
 * same periodic cell, so its devices have their places, optics and magnet
 * strengths from the ring's lattice (`ring_lattice.ts`). A kick anywhere
 * moves the closed orbit everywhere; an arc's quadrupoles and sextupoles move
 * the ring's tunes and chromaticity; an arc's beam energy is the ring's, less
 * what the beam has radiated since the RF stations (at the ring's start).
 *
 * @module
 */

import type { DeviceDef } from "./facility.ts";
import type { LatticePoint, LatticeSection } from "./lattice.ts";
import { ARC_CELL, ARC_CELLS, type ArcMagnet } from "./arc_template.ts";
import { ArcDevice } from "./scale.ts";

const points = new WeakMap<DeviceDef, LatticePoint | null>();

/** The family of an arc device within the cell layout: `BPM`, `COR:H`, `QUAD`, `SEXT`, `BLM`. */
function layoutKey(def: ArcDevice): string {
  return def.slot.prefixTail.replace(/^:/, "").replace(/:?\d+$/, "");
}

/** Where an arc device sits along the ring, m; undefined when its family has no place in a cell. */
export function arcPosition(
  def: DeviceDef,
  ring: LatticeSection,
  catalogueCells: number,
): number | undefined {
  if (!(def instanceof ArcDevice)) return undefined;
  const cell = ring.ring?.cellLengthM ?? 0;
  const start = (catalogueCells + (def.arc.number - 1) * ARC_CELLS) * cell;
  if (def.slot.prefixTail === "") return start + (ARC_CELLS * cell) / 2;
  const key = layoutKey(def);
  const magnets = key === "QUAD"
    ? ARC_CELL.quads
    : key === "SEXT"
    ? ARC_CELL.sextupoles
    : undefined;
  const places = magnets?.map((m) => m.atM) ?? ARC_CELL.positions[key];
  if (places === undefined || places.length === 0 || def.index === 0) return undefined;
  const i = def.index - 1;
  return start + Math.floor(i / places.length) * cell + (places[i % places.length] ?? 0);
}

/** The lattice point of an arc device in the ring (kept per device), or undefined. */
export function arcPoint(
  def: DeviceDef,
  ring: LatticeSection,
  catalogueCells: number,
): LatticePoint | undefined {
  const known = points.get(def);
  if (known !== undefined) return known ?? undefined;
  const s = arcPosition(def, ring, catalogueCells);
  const at = s === undefined ? undefined : ring.at(s);
  points.set(def, at ?? null);
  return at;
}

/** An arc quadrupole's or sextupole's magnet: what it copies and how long it is. */
export function arcMagnet(def: DeviceDef): ArcMagnet | undefined {
  if (!(def instanceof ArcDevice)) return undefined;
  const key = layoutKey(def);
  const magnets = key === "QUAD"
    ? ARC_CELL.quads
    : key === "SEXT"
    ? ARC_CELL.sextupoles
    : undefined;
  if (magnets === undefined || def.index === 0) return undefined;
  return magnets[(def.index - 1) % magnets.length];
}

/** True for a device of a generated arc. */
export function isArcDevice(def: DeviceDef): boolean {
  return def instanceof ArcDevice;
}

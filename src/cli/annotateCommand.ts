// `whale annotate`: the notes the editor keeps (archive/annotationStore.ts), from a terminal —
// add one on a trajectory (or a turn of it), list them, delete one. The run's next harness phase
// hands them to the proposer.
import { existsSync } from 'node:fs';
import { addAnnotation, deleteAnnotation, readAnnotations } from '../archive/annotationStore.js';
import { findTrajectory, indexJsonl, readTrajectoryAt } from '../archive/jsonlIndex.js';
import { ResultStore } from '../archive/resultStore.js';
import { RunStore } from '../archive/runStore.js';
import { InputError, WhaleError } from '../core/errors.js';
import type { Values } from './command.js';
import { intFlag, resolveStoreDir } from './project.js';

const flag = (field: string, message: string) => new InputError({ file: '(command line)', field }, message);

export async function run(values: Values, positionals: string[]): Promise<number> {
  const storeDir = resolveStoreDir(values);
  const runs = new RunStore(storeDir);
  const runId = typeof values.run === 'string' ? values.run : runs.current();
  if (!runId) throw new WhaleError(`no current run in ${storeDir}: name one with --run`);
  if (!existsSync(runs.runDir(runId))) throw flag('--run', `no run '${runId}' in ${runs.runsDir()}`);
  const runDir = runs.runDir(runId);

  if (values.list) {
    const notes = readAnnotations(runDir);
    if (values.json) console.log(JSON.stringify(notes, null, 2));
    else
      for (const n of notes)
        console.log(`${n.id}  ${n.taskId ?? '-'}  ${n.turn !== undefined ? `turn ${n.turn + 1}` : 'whole'}  ${n.author ?? ''}  ${n.text.split('\n')[0]}`);
    return 0;
  }
  if (typeof values.delete === 'string') {
    if (!deleteAnnotation(runDir, values.delete)) throw flag('--delete', `no note '${values.delete}' in run ${runId}`);
    console.log(`deleted ${values.delete}`);
    return 0;
  }

  const text = positionals.join(' ').trim();
  if (!text) throw flag('TEXT', 'write the note after the options');
  if (typeof values.key !== 'string' || typeof values.trajectory !== 'string')
    throw flag(
      '--key/--trajectory',
      'name the trajectory: --key <evaluation key hash> --trajectory <id> (both are in the transcript and in trajectories.jsonl)',
    );
  const file = new ResultStore(storeDir).trajectoriesFile(values.key);
  if (!existsSync(file)) throw flag('--key', `no evaluation ${values.key} in ${storeDir}`);
  const index = await indexJsonl(file);
  const line = findTrajectory(index, values.trajectory);
  if (line < 0) throw flag('--trajectory', `no trajectory '${values.trajectory}' in ${file}`);
  const t = readTrajectoryAt(index, line);
  const turnNo = intFlag(values, 'turn');
  if (turnNo !== undefined && (turnNo < 1 || turnNo > t.modelCalls.length))
    throw flag('--turn', `turns are numbered 1..${t.modelCalls.length} in this trajectory, got ${turnNo}`);
  const note = addAnnotation(runDir, {
    text,
    harnessHash: t.harnessHash,
    taskId: t.taskId,
    trajectoryId: t.id,
    keyHash: values.key,
    ...(turnNo !== undefined ? { turn: turnNo - 1 } : {}),
    author: typeof values.author === 'string' ? values.author : (process.env.USER ?? 'cli'),
  });
  console.log(note.id);
  return 0;
}

/** What a waiting Generate run shows of its videos: in the execution's custom data and, in manual runs, the editor. */
import type { IExecuteFunctions } from 'n8n-workflow';

import { VideoProgress } from '../../nodes/GatewayVideoGenerate/progress';
import type { TaskRecord } from '../../nodes/GatewayVideoGenerate/task';

function context() {
	const data = new Map<string, string>();
	const messages: string[] = [];
	const ctx = {
		getNode: () => ({ name: 'Make Teasers!' }),
		customData: { set: (key: string, value: string) => data.set(key, value) },
		sendMessageToUI: (message: string) => messages.push(message),
	} as unknown as IExecuteFunctions;
	return { ctx, data, messages };
}

describe('VideoProgress', () => {
	it('keeps the counts and the task ids in one custom-data key of the node, within 255 characters', () => {
		const { ctx, data, messages } = context();
		const tasks = new Map<number, TaskRecord>();
		const progress = new VideoProgress(ctx, tasks, 3);
		tasks.set(0, { task_id: 'task_a', status: 'SUCCESS' });
		tasks.set(1, { task_id: 'task_b', status: 'IN_PROGRESS', progress: '40%' });
		progress.update();
		expect(data.get('video_Make_Teasers_')).toBe('1/3 done, 1 waiting: task_a task_b');
		expect(messages).toEqual(['Make Teasers!: 1/3 done, 1 waiting']);
		progress.update(); // unchanged: nothing sent again
		expect(messages).toHaveLength(1);
	});

	it('says how many ids did not fit', () => {
		const { ctx, data } = context();
		const tasks = new Map<number, TaskRecord>();
		for (let i = 0; i < 40; i++) tasks.set(i, { task_id: `task_${'x'.repeat(20)}_${i}`, status: i === 3 ? 'FAILURE' : 'QUEUED' });
		new VideoProgress(ctx, tasks, 40).update();
		const value = data.get('video_Make_Teasers_') ?? '';
		expect(value.length).toBeLessThanOrEqual(255);
		expect(value).toMatch(/^0\/40 done, 1 failed, 39 waiting: task_x+_0 .* \+\d+ more$/);
	});

	it('works in contexts without custom data (a tool run)', () => {
		const tasks = new Map<number, TaskRecord>([[0, { task_id: 't', status: 'QUEUED' }]]);
		const bare = { getNode: () => ({ name: 'n' }) } as unknown as IExecuteFunctions;
		expect(() => new VideoProgress(bare, tasks, 1).update()).not.toThrow();
	});
});

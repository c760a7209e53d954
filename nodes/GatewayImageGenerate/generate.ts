/** Operation Generate: POST /v1/images/generations for each item, its JSON body built from the item's parameters. */
import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { runPerItem } from '../shared/items/itemRunner';
import { itemDeadline } from '../shared/wire/transport';
import { IMAGE_DEADLINE_MS, deliverImages, imageLimitName } from './deliver';
import { buildImageBody, readImageRequest } from './request';

export async function generateImages(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
	return await runPerItem(this, {
		prepare: (itemIndex) => readImageRequest(this, itemIndex),
		run: async (request, itemIndex, client) =>
			await deliverImages(this, client, request, itemIndex, { path: '/v1/images/generations', body: buildImageBody(request), what: 'Generating the images' }, itemDeadline(IMAGE_DEADLINE_MS, imageLimitName('generating'))),
	});
}

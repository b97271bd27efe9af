// GET /v1/models and GET /v1/models/{model}: the catalog as OpenAI's model list and model object.
import { headers, RATE_LIMIT_HEADERS } from '../headers.js';
import { keyedErrors, keyedRefusal, refusal } from '../responses.js';
import type { PathItem } from '../types.js';

const json = (name: string) => ({ 'application/json': { schema: { $ref: `#/components/schemas/${name}` } } });

export const modelPaths: Record<string, PathItem> = {
  '/v1/models': {
    get: {
      operationId: 'listModels',
      tags: ['Models'],
      summary: 'List models',
      description: '`auto`, then every catalog model with its prices, quality, capabilities and availability (whether its provider is configured).',
      parameters: [{ $ref: '#/components/parameters/RequestId' }],
      responses: {
        '200': { description: 'The models.', headers: headers(...RATE_LIMIT_HEADERS), content: json('ModelList') },
        ...keyedErrors(),
      },
    },
  },
  '/v1/models/{model}': {
    get: {
      operationId: 'retrieveModel',
      tags: ['Models'],
      summary: 'Retrieve a model',
      description: 'The entry GET /v1/models shows for the model, as OpenAI answers "retrieve model".',
      parameters: [
        {
          name: 'model',
          in: 'path',
          required: true,
          description:
            'An id the list shows (`gpt-4o`, `auto`, `openai/gpt-4o-mini`), or an alias or `provider/model` pin that means one catalog model (answered with that model\'s entry, under the id the list shows). A slash may be sent raw or as %2F. An id several providers serve is listed, and retrieved, only as `provider/id`.',
          schema: { type: 'string' },
        },
        { $ref: '#/components/parameters/RequestId' },
      ],
      responses: {
        '200': { description: 'The model.', headers: headers(...RATE_LIMIT_HEADERS), content: json('Model') },
        '400': refusal('The path is not valid percent-encoding (code invalid_request, param model).'),
        '404': keyedRefusal('`Model not found` (code model_not_found, param model).'),
        ...keyedErrors(),
      },
    },
  },
};

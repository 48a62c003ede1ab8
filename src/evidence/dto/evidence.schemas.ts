/** OpenAPI schema of an evidence pack line (docs/evidence-pack.md). */
import { obj, Schema } from '../../common/openapi';

export const EVIDENCE_SCHEMAS: Record<string, Schema> = {
  EvidencePackMember: obj(
    {
      member: {
        type: 'string',
        description:
          'the member name: `header`, `log/vkey`, `log/checkpoint`, `log/timestamp`, `plan/<plan_id>/<version>`, `event/<position>`, `entry/<seq>`, `commitment/<id>`, `receipt/<id>`, `workflow/<id>/<position>`, `outcome/<id>`, `report/<report_id>`, `manifest/<n>` (SHA-256 of the members since the previous chunk) or `manifest` (the last line)',
      },
    },
    'one line of an aer1-evidence-pack/1 (JSON Lines); its other members depend on `member` (docs/evidence-pack.md)',
  ),
};

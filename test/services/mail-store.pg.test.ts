/** test/mail/store.props.test.ts against PostgreSQL (the services config sets CHAINMAIL_TEST_INDEX_DB=postgres). */
import "../mail/store.props.test.js";

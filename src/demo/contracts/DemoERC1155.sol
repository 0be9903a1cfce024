// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {ERC1155} from "@openzeppelin/contracts/token/ERC1155/ERC1155.sol";
import {ERC1155Burnable} from "@openzeppelin/contracts/token/ERC1155/extensions/ERC1155Burnable.sol";

/// OpenZeppelin ERC-1155 with open single and batch minting and holder burns (the seaport-js TestERC1155 has
/// neither batch mints nor burns).
contract DemoERC1155 is ERC1155, ERC1155Burnable {
    constructor() ERC1155("https://chainmail.invalid/1155/{id}.json") {}

    function mint(address to, uint256 id, uint256 amount) external {
        _mint(to, id, amount, "");
    }

    function mintBatch(address to, uint256[] calldata ids, uint256[] calldata amounts) external {
        _mintBatch(to, ids, amounts, "");
    }
}
